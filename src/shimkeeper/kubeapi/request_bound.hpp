// How long one blocking request may take, and what a pass of requests does once one got no
// answer.
//
// Decision: REST calls stay blocking (no caller moves onto the curl-multi loop), because the
// daemon's reconcile is one synchronous transaction anyway, but none may hold its loop for long:
// each is bounded by a quarter of systemd's watchdog interval (WatchdogSec, read from the
// environment systemd gives the unit) and at most 15 s without a watchdog; and the requests of
// one pass (a reconcile, a `status`) share an ApiPass, which pings the watchdog before each
// request and, after the first one that got no answer (a timeout, a refused connection, a 5xx),
// fails the rest at once, so a pass against a hanging API server costs one bound, not one per
// request. The pass then goes on as it does for an unreachable API server: the last reading stands.
// Every client the daemon's loop waits on joins a pass: the reconcile's own (its reads, the Node
// report, the rollout slots' take, release and failure marking), the watches' slot claims between
// reconciles, and each coordinator round and pass (the coordinator pings the same way).
#pragma once

#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace shimkeeper::kubeapi {

inline constexpr std::chrono::milliseconds k_max_request_time{15'000};
inline constexpr std::chrono::milliseconds k_min_request_time{1'000};

// The bound for a process under a watchdog of that interval (nullopt: none): a quarter of it,
// within [k_min_request_time, k_max_request_time].
std::chrono::milliseconds request_time_bound(std::optional<std::chrono::microseconds> watchdog);
// The same for this process (sd_watchdog_enabled: WATCHDOG_USEC, when meant for this pid).
std::chrono::milliseconds request_time_bound();

class ApiPass {
public:
    // heartbeat: called before every request (the daemon's watchdog ping); may be empty.
    // wanted: asked before every request; false fails it at once (a pass whose owner is stopping
    // it, such as the slot renewal's when the transaction ends); may be empty.
    explicit ApiPass(std::function<void()> heartbeat = {}, std::function<bool()> wanted = {})
        : m_heartbeat(std::move(heartbeat)), m_wanted(std::move(wanted)) {}

    // A new pass with the same heartbeat, for requests that must be asked even when this pass
    // already met an API server that did not answer (marking a rollout failed).
    std::shared_ptr<ApiPass> sibling() const { return std::make_shared<ApiPass>(m_heartbeat); }
    // The heartbeat alone, before something else that may wait for up to one request's bound
    // (joining the slot renewal's thread).
    void ping() const {
        if (m_heartbeat) {
            m_heartbeat();
        }
    }

    // Before a request: pings, and fails at once when an earlier request of this pass got no
    // answer (a network error naming that request).
    util::Expected<void> before_request() const;
    // A request that got no answer (a transport failure, a 5xx): the rest of the pass fails.
    void note_no_answer(const util::Error& error);
    // A request that got an HTTP answer below 500.
    void note_answer() { ++m_answers; }
    bool answered_so_far() const { return !m_no_answer.has_value(); }
    // The first request that got no answer; nullopt while every one did.
    const std::optional<util::Error>& no_answer() const { return m_no_answer; }
    // A credential refused: by the API server (401) or before sending (a tokenFile that
    // cannot be read). Seen by a pass whose reading came from open watches, which a refusal
    // does not close.
    void note_refused(const util::Error& error) {
        if (!m_refused) {
            m_refused = error;
        }
    }
    const std::optional<util::Error>& refused() const { return m_refused; }
    int answers() const { return m_answers; }

private:
    std::function<void()> m_heartbeat;
    std::function<bool()> m_wanted;
    std::optional<util::Error> m_no_answer;
    std::optional<util::Error> m_refused;
    int m_answers = 0;
};

} // namespace shimkeeper::kubeapi
