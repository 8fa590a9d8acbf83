#include "shimkeeper/cli/format.hpp"

#include <array>
#include <cstdio>

namespace shimkeeper::cli {

std::string short_digest(const std::string& digest) {
    if (digest.empty()) {
        return "sha256:(known after download)";
    }
    return "sha256:" + digest.substr(0, 12);
}

std::string human_size(std::uint64_t bytes) {
    static constexpr std::array<const char*, 5> k_units{"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < k_units.size()) {
        value /= 1024;
        ++unit;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, k_units[unit]);
    return buffer;
}

} // namespace shimkeeper::cli
