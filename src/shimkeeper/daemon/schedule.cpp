#include "shimkeeper/daemon/schedule.hpp"

#include "shimkeeper/daemon/backoff.hpp"

#include <algorithm>

namespace shimkeeper::daemon {

const char* to_string(Trigger trigger) {
    switch (trigger) {
    case Trigger::startup:
        return "startup";
    case Trigger::change:
        return "change";
    case Trigger::retry:
        return "retry";
    case Trigger::drift:
        return "drift check";
    }
    return "unknown";
}

void Schedule::on_change(Instant now, bool urgent,
                         std::optional<std::chrono::milliseconds> debounce) {
    if (!m_first_change) {
        m_first_change = now;
        m_quiet_at = Instant{0};
    }
    m_last_change = std::max(m_last_change, now);
    m_quiet_at = std::max(m_quiet_at, now + debounce.value_or(m_policy.debounce));
    m_urgent = m_urgent || urgent;
}

void Schedule::on_outcome(bool ok, Instant now, std::chrono::milliseconds drift_delay) {
    m_started = true;
    m_first_change.reset();
    m_urgent = false;
    if (ok) {
        m_failures = 0;
        m_not_before = now;
    } else {
        ++m_failures;
        m_not_before =
            now + backoff_delay(m_failures, m_policy.backoff_initial, m_policy.backoff_max);
    }
    m_drift_at = now + drift_delay;
}

Due Schedule::next() const {
    if (!m_started) {
        return {Instant{0}, Trigger::startup};
    }
    if (m_first_change && m_urgent) {
        return {std::max(m_last_change, m_not_before), Trigger::change};
    }
    if (m_first_change) {
        Instant quiet = m_quiet_at;
        Instant cap = *m_first_change + std::max(m_policy.max_debounce, m_policy.debounce);
        return {std::max(std::min(quiet, cap), m_not_before), Trigger::change};
    }
    if (m_failures > 0) {
        return {m_not_before, Trigger::retry};
    }
    return {m_drift_at, Trigger::drift};
}

std::optional<Instant> Schedule::retry_at() const {
    if (m_failures == 0) {
        return std::nullopt;
    }
    return m_not_before;
}

} // namespace shimkeeper::daemon
