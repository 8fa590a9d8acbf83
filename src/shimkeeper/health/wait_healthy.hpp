// Polls containerd until it is healthy or the time is up, backing off between attempts.
// Time is injected (Pacer) so that the backoff and the deadline are tested without waiting.
#pragma once

#include "shimkeeper/health/containerd_client.hpp"
#include "shimkeeper/health/evaluate.hpp"

#include <chrono>
#include <functional>

namespace shimkeeper::health {

struct Pacer {
    std::function<std::chrono::steady_clock::time_point()> now;
    std::function<void(std::chrono::milliseconds)> sleep;
};

// steady_clock and a real sleep.
Pacer real_pacer();

struct Backoff {
    std::chrono::milliseconds first{50};       // containerd 1.6 restarts to API-ready in ~70-80 ms
    std::chrono::milliseconds max{1'000};      // doubles up to this
    std::chrono::milliseconds max_call{5'000}; // one gRPC call never waits longer
    std::chrono::milliseconds min_call{200};   // no attempt starts with less time than this
};

// Observes and evaluates until healthy or `timeout` has passed, and returns the last report:
// its reason says what was still wrong when time ran out. Never runs past the deadline: the
// last attempt starts no later than min_call before it.
HealthReport wait_healthy(ContainerdClient& client, const HealthExpectation& expectation,
                          std::chrono::milliseconds timeout, const Pacer& pacer = real_pacer(),
                          const Backoff& backoff = {});

} // namespace shimkeeper::health
