#include "shimkeeper/health/wait_healthy.hpp"

#include <algorithm>
#include <thread>

namespace shimkeeper::health {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

Pacer real_pacer() {
    return {[] { return std::chrono::steady_clock::now(); },
            [](milliseconds delay) {
                std::this_thread::sleep_for(delay);
            }};
}

HealthReport wait_healthy(ContainerdClient& client, const HealthExpectation& expectation,
                          milliseconds timeout, const Pacer& pacer, const Backoff& backoff) {
    const auto deadline = pacer.now() + timeout;
    const auto remaining = [&] {
        // Rounded up, so the last fraction of a millisecond is not taken for the deadline.
        return std::max(milliseconds{0}, std::chrono::ceil<milliseconds>(deadline - pacer.now()));
    };
    milliseconds delay = backoff.first;
    int attempts = 0;
    while (true) {
        ++attempts;
        const milliseconds call_timeout =
            std::clamp(remaining(), milliseconds{1}, backoff.max_call);
        const auto version = client.version(call_timeout);
        const util::Expected<CriStatus> status =
            version ? client.cri_status(std::clamp(remaining(), milliseconds{1}, backoff.max_call))
                    : util::fail(util::ErrorCode::external, "not asked: Version failed");
        HealthReport report = evaluate(expectation, version, status);
        if (report.healthy) {
            return report;
        }
        // Sleep, but leave the next attempt at least min_call to answer; when there is no room
        // for that, stop here: a last call cut to a few milliseconds would only report its own
        // timeout instead of what is really wrong.
        const milliseconds wait = std::min(delay, remaining() - backoff.min_call);
        if (wait <= milliseconds{0}) {
            report.reason += " (still so after " + std::to_string(attempts) + " checks in " +
                             std::to_string(timeout.count()) + " ms)";
            return report;
        }
        pacer.sleep(wait);
        delay = std::min(delay * 2, backoff.max);
    }
}

} // namespace shimkeeper::health
