#include "shimkeeper/kubeapi/retry_backoff.hpp"

#include <algorithm>

namespace shimkeeper::kubeapi {

std::chrono::milliseconds retry_backoff(unsigned failures, std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max, double unit_random) {
    if (failures == 0) {
        return std::chrono::milliseconds(0);
    }
    double base = static_cast<double>(initial.count());
    for (unsigned i = 1; i < failures && base < static_cast<double>(max.count()); ++i) {
        base *= 2;
    }
    base = std::min(base, static_cast<double>(max.count()));
    double unit = std::clamp(unit_random, 0.0, 1.0);
    return std::chrono::milliseconds(static_cast<long long>(base / 2 + base / 2 * unit));
}

std::chrono::milliseconds throttle_wait(long retry_after_seconds, double unit_random) {
    const long long base =
        retry_after_seconds > 0 ? std::min(retry_after_seconds, 2L) * 1000 : 1000;
    const double unit = std::clamp(unit_random, 0.0, 1.0);
    return std::chrono::milliseconds(base +
                                     static_cast<long long>(static_cast<double>(base) * unit));
}

} // namespace shimkeeper::kubeapi
