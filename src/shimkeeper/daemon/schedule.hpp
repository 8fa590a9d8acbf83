// When the daemon reconciles next, and why: the pure decision behind the loop's one timer.
//
// Three reasons meet here. A change of a watched file is debounced (an editor or a package
// writes several files in a burst; we want to read the burst once, not half of it), but a stream
// of changes that never pauses is still picked up after max_debounce. A failed attempt is
// retried after a capped exponential backoff, and while failing nothing, not even a change,
// reconciles earlier than that: a broken desired state must not restart containerd in a loop.
// Otherwise the drift check runs after a jittered interval since the last attempt.
#pragma once

#include <chrono>
#include <optional>

namespace shimkeeper::daemon {

// CLOCK_MONOTONIC, the clock sd-event's timers use.
using Instant = std::chrono::microseconds;

enum class Trigger { startup, change, retry, drift };

const char* to_string(Trigger trigger);

struct SchedulePolicy {
    std::chrono::milliseconds debounce{500};
    std::chrono::milliseconds max_debounce{5'000};
    std::chrono::milliseconds backoff_initial{5'000};
    std::chrono::milliseconds backoff_max{300'000};
};

struct Due {
    Instant at;
    Trigger why;
};

class Schedule {
public:
    explicit Schedule(SchedulePolicy policy) : m_policy(policy) {}

    // A watched path changed at `now`; `urgent`: reconcile at once, without the debounce;
    // `debounce`: a quiet time of this change's own instead of the policy's (a cluster watch's
    // edits come in short bursts; a file's writer may take longer).
    void on_change(Instant now, bool urgent = false,
                   std::optional<std::chrono::milliseconds> debounce = std::nullopt);

    // An attempt finished at `now`. drift_delay is the (already jittered) wait until the next
    // drift check. Changes seen before this call were read by that attempt and are cleared.
    void on_outcome(bool ok, Instant now, std::chrono::milliseconds drift_delay);

    // The next reconcile. Before the first outcome: due at once, for startup.
    Due next() const;

    unsigned consecutive_failures() const { return m_failures; }
    bool change_pending() const { return m_first_change.has_value(); }
    // While failing: the earliest time any attempt may start.
    std::optional<Instant> retry_at() const;

private:
    SchedulePolicy m_policy;
    bool m_started = false;
    unsigned m_failures = 0;
    Instant m_not_before{0};
    Instant m_drift_at{0};
    std::optional<Instant> m_first_change;
    Instant m_last_change{0};
    Instant m_quiet_at{0}; // the latest of each pending change's time plus its debounce
    bool m_urgent = false;
};

} // namespace shimkeeper::daemon
