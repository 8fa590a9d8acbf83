// Leader election on a coordination.k8s.io/v1 Lease, by the rules client-go's leader election
// follows, so that shimkeeper agents and any Go controller reading the same Lease agree:
//   - no Lease: create it naming us (AlreadyExists: someone was faster, not leader this round);
//   - a Lease held by another: its expiry is judged by when WE last saw its record change
//     (holder, renewTime, ...) plus its leaseDurationSeconds, on our own monotonic clock. The
//     holder's clock and the renewTime it wrote are never compared with ours;
//   - held by us, vacant (holderIdentity empty) or expired: write ourselves in with the read's
//     resourceVersion (409: another candidate won, not leader this round); a new holder bumps
//     leaseTransitions and sets acquireTime. The write is a merge patch that carries the
//     version, not client-go's PUT: the same precondition, and a verb of its own for the API
//     server's priority levels (write_spec);
//   - leading ends when no renewal succeeded within renew_deadline (the caller must stop acting
//     as leader then), and release() hands the lease over at once: holder cleared, duration 1 s.
// Defaults are client-go's: lease 15 s, renew deadline 10 s, retry every 2 s. One round is one
// call of try_acquire_or_renew(); the caller runs it after next_round_in() (a timer in its loop).
//
// Unlike client-go, a candidate need not read the Lease every round: when the caller feeds it
// a watch on the Lease (observe()), a round judges the watched copy and makes no request while
// another agent's lease runs, and the leader renews with the resourceVersion of its own last
// write. Every write keeps its precondition, so a stale copy can only cost a 409: a leader's
// renewal then re-reads and tries once more; a candidate reads in its next round. A write that
// got no answer (a timeout) may have landed, so the round after it reads first. Without
// observe() every round reads the Lease, as client-go's does.
#pragma once

#include "shimkeeper/kubeapi/api_client.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace shimkeeper::kubeapi {

struct LeaseSettings {
    std::string ns;
    std::string name;
    std::string identity; // unique per candidate: the node name
    std::chrono::seconds lease_duration{15};
    std::chrono::seconds renew_deadline{10};
    std::chrono::seconds retry_period{2};
};

class LeaderElector {
public:
    using Clock = std::chrono::steady_clock;

    // The candidate's state alone: each request goes through the client its caller passes, so
    // the state moves to a renewal thread with its own connection, and back, holding no client.
    explicit LeaderElector(LeaseSettings settings) : m_settings(std::move(settings)) {}

    // One round through `client`. True when we hold the lease after it.
    util::Expected<bool> try_acquire_or_renew(ApiClient& client,
                                              Clock::time_point now = Clock::now());
    // The Lease as a watch last saw it (nullopt: it does not exist).
    void observe(const std::optional<nlohmann::json>& lease, Clock::time_point now = Clock::now());
    // How long until a round can change anything: retry_period while leading or when the Lease
    // is not watched; else until the holder's lease runs out on our clock (zero when vacant).
    std::chrono::milliseconds next_round_in(Clock::time_point now = Clock::now()) const;
    // Whether we may act as leader now: our last successful renewal is within renew_deadline.
    bool is_leader(Clock::time_point now = Clock::now()) const;
    // When our last successful write as holder was (nullopt: none since the last release).
    std::optional<Clock::time_point> renewed_at() const { return m_renewed_at; }
    // Gives the lease up if we hold it, so that another candidate takes over without waiting.
    util::Expected<void> release(ApiClient& client);

    const std::string& observed_holder() const { return m_observed_holder; }

private:
    util::Expected<bool> create_lease(ApiClient& client, Clock::time_point now);
    util::Expected<bool> judge_and_write(ApiClient& client, nlohmann::json lease,
                                         Clock::time_point now, bool reread_on_conflict);
    util::Expected<nlohmann::json> write_spec(ApiClient& client, const nlohmann::json& lease,
                                              const nlohmann::json& spec) const;
    util::Expected<bool> read_and_judge(ApiClient& client, Clock::time_point now);
    void note_record(const nlohmann::json& spec, Clock::time_point now);
    nlohmann::json spec_for_us(const nlohmann::json& old_spec) const;

    LeaseSettings m_settings;
    std::string m_observed_record; // the spec as last read, serialised
    std::string m_observed_holder;
    Clock::time_point m_observed_at{};
    std::optional<Clock::time_point> m_renewed_at; // our last successful write as holder
    bool m_watched = false;                        // observe() feeds m_known
    bool m_known_stale = false;                    // a write conflicted: read before trusting it
    std::optional<nlohmann::json> m_known;         // the Lease as last seen; nullopt: none
};

} // namespace shimkeeper::kubeapi
