#include "shimkeeper/util/utc_time.hpp"

#include <chrono>
#include <ctime>

namespace shimkeeper::util {

std::string now_rfc3339() {
    std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buffer;
}

} // namespace shimkeeper::util
