#include "shimkeeper/kubeapi/micro_time.hpp"

#include <cstdio>
#include <ctime>

namespace shimkeeper::kubeapi {

std::string micro_time(std::chrono::system_clock::time_point when) {
    using namespace std::chrono;
    auto micros = duration_cast<microseconds>(when.time_since_epoch()).count();
    std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[96];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<long long>(micros % 1'000'000));
    return text;
}

} // namespace shimkeeper::kubeapi
