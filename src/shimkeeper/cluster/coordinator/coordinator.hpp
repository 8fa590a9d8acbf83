// The coordinator (CLUSTER.md, "Identity and least privilege"): the candidates are the
// `shimkeeper coordinate` processes (cli/cmd_coordinate.cpp), each under the coordinator's own
// identity and named by --identity (default the host's name and a random suffix); node agents
// never stand. The one holding the Lease `shimkeeper-coordinator` in the agent namespace does
// the cluster-wide work of coordinator_pass.hpp. Everything runs on the given CurlEventLoop but
// the leader's renewals:
//   - a watch on the namespace's Leases (the election's, and the rollout slots kept in a
//     SlotBoard for the passes) for the whole candidacy, and election rounds (LeaderElector,
//     client-go's rules) on a loop timer; while leading the renewals run every retry_period on
//     a thread with its own connection (LeaderRenewal: a pass's writes block the loop) and the
//     timer only reads how they went; otherwise rounds run only when the watched holder's lease
//     runs out or the Lease is released or deleted, so a candidate makes no request while
//     another leads (one watch instead of client-go's read every 2 s; rounds start with up to
//     retry_period/2 of jitter so that candidates do not write at the same instant);
//   - while leading: watches on Shims, all Nodes (kept as NodeViews: labels and shimkeeper's
//     annotations only, so a kubelet heartbeat is no change) and RuntimeClasses; any change
//     arms one pass `settle` later (changes in between join it); the first pass waits until
//     all three watches and a fresh list of the slot Leases (taken at each term's start: a
//     standby's watch may run behind) are in, so nothing is computed from half a view;
//   - a slot Lease that goes (released or deleted), and a Node that newly asks for a slot, run
//     the pass's grant step alone at once, so a waiting node gets the slot one watch event
//     after it frees, not `settle` plus a whole pass of status writes later;
//   - a pass with failed writes is run again after a growing, jittered backoff;
//   - leadership lost (a round finds another holder, or no renewal within renew_deadline):
//     the watches and the view are dropped at once and nothing more is written; a pass in
//     progress checks before every Shim.
// `shimkeeper coordinate` constructs it once, calls start(), keeps the loop running, and calls
// release() on SIGTERM so that another candidate takes over without waiting for the lease to
// expire.
#pragma once

#include "shimkeeper/cluster/coordinator/coordinator_pass.hpp"
#include "shimkeeper/cluster/model/slot_board.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/kubeapi/curl_event_loop.hpp"
#include "shimkeeper/kubeapi/leader_election.hpp"
#include "shimkeeper/kubeapi/leader_renewal.hpp"
#include "shimkeeper/kubeapi/watch.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <set>

namespace shimkeeper::cluster::coordinator {

inline constexpr const char* k_coordinator_lease = "shimkeeper-coordinator";

struct CoordinatorSettings {
    std::string ns = "shimkeeper-system"; // [kube] namespace: where the Lease lives
    std::string identity;                 // this candidate's holderIdentity (--identity)
    std::string lease_name = k_coordinator_lease;
    std::chrono::seconds lease_duration{15};
    std::chrono::seconds renew_deadline{10};
    std::chrono::seconds retry_period{2};
    std::chrono::milliseconds settle{300}; // from a change to the pass that handles it
    std::chrono::milliseconds backoff_initial{1000};
    std::chrono::milliseconds backoff_max{60'000};
    // Called before every request (systemd's watchdog ping under `shimkeeper coordinate`); may
    // be empty. Each round, pass and grant pass is an ApiPass (kubeapi/request_bound.hpp): it
    // pings before each request and asks nothing more after its first unanswered one.
    std::function<void()> heartbeat;
};

// Counters for status output and tests.
struct CoordinatorStats {
    unsigned rounds = 0;        // election rounds
    unsigned terms = 0;         // times this candidate became the leader
    unsigned passes = 0;        // passes run to the end
    unsigned writes = 0;        // API writes of all passes (Events not counted)
    unsigned failed_passes = 0; // passes with at least one failed write
    unsigned grants = 0;        // rollout slots granted
    unsigned halts = 0;         // rollouts this coordinator found halted anew
    // Each Shim's node counts as the leader's last pass over it saw them; empty while standing by.
    std::map<std::string, model::NodeCounts> shim_nodes;
};

class Coordinator {
public:
    Coordinator(kubeapi::CurlEventLoop& loop, kubeapi::Client& client, CoordinatorSettings settings,
                kubeapi::EventSource source, util::Log log);
    ~Coordinator();
    Coordinator(const Coordinator&) = delete;
    Coordinator& operator=(const Coordinator&) = delete;

    // The first election round runs at once (on the loop), then every retry_period.
    util::Expected<void> start();
    // Stops acting and gives the Lease up if held. No more rounds after it.
    util::Expected<void> release();

    bool leading() const { return m_leading; }
    // The rollout slots seen on the Lease watch, and a callback for when one changes.
    const model::SlotBoard& slots() const { return m_slots; }
    void on_slot_change(model::SlotBoard::Listener listener) {
        m_slot_listener = std::move(listener);
    }
    const CoordinatorStats& stats() const { return m_stats; }
    // Why this candidate is not ready to serve (a readiness probe), empty when it is: it has
    // listed the Leases (the API server answered; it knows who leads) and, leading, its views of
    // Shims, Nodes, RuntimeClasses and slots are synced. A standby candidate is ready.
    std::string unready_reason() const;

private:
    void schedule_round(std::chrono::milliseconds delay);
    std::chrono::milliseconds candidate_delay();
    void round();
    // A leader's round: ends the term if the renewals stopped holding it, else runs an owed pass.
    void check_term();
    void on_lease_seen(const kubeapi::WatchEvent& event);
    util::Expected<void> begin_term();
    void end_term(const std::string& why);
    void on_change();
    void arm_pass(std::chrono::milliseconds delay);
    void pass();
    enum class GrantCause { slot_went, node_asked, batch_cut, views_in };
    void arm_grant_pass(GrantCause cause);
    void grant_pass();
    bool views_synced() const {
        return m_shims_synced && m_nodes_synced && m_classes_synced && m_slots_listed_this_term;
    }
    void load_slots_into_view();
    // (Re)starts the Lease watch: a list, then a watch from it.
    util::Expected<void> watch_leases();
    bool still_leading() const;
    // The requests from now on (a round, a pass, a release) form a new ApiPass.
    void begin_requests();
    void report_watch_problems();
    void count_outcome(const PassOutcome& outcome);

    kubeapi::CurlEventLoop& m_loop;
    kubeapi::Client& m_client;
    CoordinatorSettings m_settings;
    util::Log m_log;
    kubeapi::LeaderElector m_elector; // a candidate's; the renewal's copy while leading
    std::unique_ptr<kubeapi::LeaderRenewal> m_renewal; // while leading
    kubeapi::EventRecorder m_events;
    std::minstd_rand m_rng;

    bool m_leading = false;
    bool m_released = false;
    kubeapi::SdSource m_round_timer;
    kubeapi::SdSource m_pass_timer;
    bool m_pass_armed = false;
    bool m_pass_owed = false; // a pass was skipped or cut short while the renewal was late
    kubeapi::SdSource
        m_grant_timer; // a grant pass: a slot went or a node asked (pass() grants too)
    bool m_grant_armed = false;
    std::set<GrantCause> m_grant_causes; // since the grant pass was armed, for its log lines
    bool m_views_in_this_term = false;   // this term's views have all been synced once
    std::chrono::steady_clock::time_point m_pass_due;
    unsigned m_failures_in_row = 0;
    bool m_round_failing = false; // log an unreachable API server once, not every round

    std::unique_ptr<kubeapi::Watch> m_lease_watch; // for the whole candidacy, not just a term
    model::SlotBoard m_slots;                      // fed by m_lease_watch
    model::SlotBoard::Listener m_slot_listener;
    ClusterView m_view;
    TermMemory m_term;
    bool m_shims_synced = false;
    bool m_slots_listed_this_term = false; // the Lease watch listed since the term (or start) began
    bool m_nodes_synced = false;
    bool m_classes_synced = false;
    std::unique_ptr<kubeapi::Watch> m_shim_watch;
    std::unique_ptr<kubeapi::Watch> m_node_watch;
    std::unique_ptr<kubeapi::Watch> m_class_watch;
    // Node agents' Events about Shims (write_refusals.hpp). Not a view the passes wait for: an
    // older deploy/ that lets the coordinator read no Events costs only those remarks.
    std::unique_ptr<kubeapi::Watch> m_write_event_watch;
    std::string m_reported_problem; // the last watch problem logged

    CoordinatorStats m_stats;
};

} // namespace shimkeeper::cluster::coordinator
