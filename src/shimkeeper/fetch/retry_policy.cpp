#include "shimkeeper/fetch/retry_policy.hpp"

#include <algorithm>

namespace shimkeeper::fetch {

Retry retry_for(const AttemptFailure& failure) {
    switch (failure.kind) {
    case FailureKind::connect:
    case FailureKind::timeout:
    case FailureKind::stall:
    case FailureKind::transfer:
    case FailureKind::no_resume: // the next attempt starts from the first byte
        return Retry::yes;
    case FailureKind::http_status: {
        long status = failure.http_status;
        bool transient = status >= 500 || status == 429 || status == 408;
        return transient ? Retry::yes : Retry::no;
    }
    case FailureKind::tls:
    case FailureKind::refused:
    case FailureKind::too_large:
    case FailureKind::local:
    case FailureKind::other:
    case FailureKind::abandoned:
        return Retry::no;
    }
    return Retry::no;
}

std::chrono::milliseconds backoff_delay(int retry, std::chrono::milliseconds base, double jitter,
                                        std::optional<std::chrono::seconds> retry_after) {
    using std::chrono::milliseconds;
    // Doubling stops once past the cap, so no shift can overflow.
    milliseconds full = std::max(base, milliseconds(0));
    for (int i = 1; i < retry && full < k_max_backoff; ++i) {
        full *= 2;
    }
    full = std::min(full, k_max_backoff);
    double fraction = 0.5 + 0.5 * std::clamp(jitter, 0.0, 1.0);
    auto wait =
        milliseconds(static_cast<milliseconds::rep>(static_cast<double>(full.count()) * fraction));
    if (retry_after && *retry_after <= k_max_retry_after) {
        wait = std::max<milliseconds>(wait, *retry_after);
    }
    return wait;
}

} // namespace shimkeeper::fetch
