#include "shimkeeper/daemon/backoff.hpp"

#include <algorithm>

namespace shimkeeper::daemon {

std::chrono::milliseconds backoff_delay(unsigned consecutive_failures,
                                        std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max) {
    if (consecutive_failures == 0 || initial.count() <= 0) {
        return std::chrono::milliseconds{0};
    }
    // Double step by step and stop at the cap: no shift can overflow however long it has failed.
    std::chrono::milliseconds delay = initial;
    for (unsigned n = 1; n < consecutive_failures && delay < max; ++n) {
        delay *= 2;
    }
    return std::min(delay, max);
}

std::chrono::milliseconds jittered(std::chrono::milliseconds base, double spread,
                                   double unit_random) {
    spread = std::clamp(spread, 0.0, 1.0);
    unit_random = std::clamp(unit_random, 0.0, 1.0);
    double factor = 1.0 - spread + 2.0 * spread * unit_random;
    auto scaled =
        static_cast<std::chrono::milliseconds::rep>(static_cast<double>(base.count()) * factor);
    return std::chrono::milliseconds{std::max<std::chrono::milliseconds::rep>(scaled, 0)};
}

} // namespace shimkeeper::daemon
