#include "shimkeeper/util/utc_time.hpp"

#include <ctime>

namespace shimkeeper::util {

std::string rfc3339(std::chrono::system_clock::time_point time) {
    std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char buffer[32] = {};
    std::size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(buffer, n);
}

std::string now_rfc3339() {
    return rfc3339(std::chrono::system_clock::now());
}

} // namespace shimkeeper::util
