// Retry spacing for a failing desired state and the spread of the periodic drift check.
// Pure functions; the random number is passed in so tests can pin it.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace shimkeeper::daemon {

// The wait after the n-th failure in a row (n >= 1): initial, 2x, 4x, ... never above max.
// n == 0 (nothing failed) gives zero.
std::chrono::milliseconds backoff_delay(unsigned consecutive_failures,
                                        std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max);

// base scaled into [base * (1 - spread), base * (1 + spread)] by unit_random in [0, 1].
// spread is clamped to [0, 1]; the result is never negative.
std::chrono::milliseconds jittered(std::chrono::milliseconds base, double spread,
                                   double unit_random);

// Draws the unit_random for jittered(): so that a fleet of nodes started together (one image,
// one reboot) does not check for drift, and restart containerd, in lockstep.
class Jitter {
public:
    static constexpr double k_drift_spread = 0.2; // +-20 %

    explicit Jitter(std::uint32_t seed) : m_rng(seed) {}

    std::chrono::milliseconds apply(std::chrono::milliseconds base, double spread) {
        return jittered(base, spread, m_unit(m_rng));
    }

private:
    std::minstd_rand m_rng;
    std::uniform_real_distribution<double> m_unit{0.0, 1.0};
};

} // namespace shimkeeper::daemon
