// A leader's renewals on a thread of their own (util/periodic_worker). While the coordinator leads,
// its event loop also runs the passes, whose writes block it (request_bound.hpp): a pass waiting on
// a slow API server (a create may take seconds when it is saturated) would hold the renewal back
// past renew_deadline and cost the term, and the other candidate would then wait out the lease.
// Here the elector's state renews every retry_period through this object's own connection, so the
// term lasts for as long as the API server answers the renewals, whatever the passes wait for. The
// loop reads leading() (a renewal within renew_deadline, and no other holder seen) and takes the
// elector back with stop() when the term ends.
#pragma once

#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/kubeapi/leader_election.hpp"
#include "shimkeeper/util/periodic_worker.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

namespace shimkeeper::kubeapi {

// How long one renewal request may take: half the renew deadline (5 s of the default 10 s), so
// that a request stuck on a dead connection (no answer, no reset) fails in time for one more
// round, on a new connection (drop_thread_connections), before the term would end. The general
// bound (request_bound.hpp, up to 15 s) outlasted the deadline: one such request cost the term.
// Not shorter: on a saturated API server a live renewal waited up to 2 s in its priority level's
// queue (bench/rollout, 1000 agents), and a third of the deadline (3.3 s) gave such requests up.
std::chrono::milliseconds renewal_request_bound(const LeaseSettings& settings);

class LeaderRenewal {
public:
    using Clock = LeaderElector::Clock;

    // elector: the one that just won or renewed the Lease (its state; it asks through a client of
    // this object's own).
    // stats: where its requests are counted too (request_stats.hpp); may be null.
    LeaderRenewal(KubeConfig config, LeaderElector elector, LeaseSettings settings,
                  std::shared_ptr<RequestStats> stats = nullptr);
    ~LeaderRenewal();
    LeaderRenewal(const LeaderRenewal&) = delete;
    LeaderRenewal& operator=(const LeaderRenewal&) = delete;

    // Whether we may still act as leader: renewed within renew_deadline, and no round found
    // another holder.
    bool leading(Clock::time_point now = Clock::now()) const;
    // Why the term is over ("Lease held by X"), once a round found another holder.
    std::optional<std::string> lost() const;
    // The last round's failure (a timeout, a refusal), empty once one succeeds again.
    std::string problem() const;
    // Renewal rounds run since the last call (for the coordinator's round count).
    unsigned take_rounds() { return m_rounds.exchange(0); }
    // Ends the renewals (waiting for at most the request in flight) and hands the elector back.
    LeaderElector stop();

private:
    void renew_round(const std::atomic<bool>& stopping);

    Client m_client;
    LeaderElector m_elector; // the worker's alone until stop() joins it
    LeaseSettings m_settings;
    mutable std::mutex m_mutex;
    std::atomic<unsigned> m_rounds = 0;
    std::optional<Clock::time_point> m_renewed_at; // m_elector's, as of its last round
    std::optional<std::string> m_lost;
    std::string m_problem;
    util::PeriodicWorker m_worker; // last: its thread uses everything above
};

} // namespace shimkeeper::kubeapi
