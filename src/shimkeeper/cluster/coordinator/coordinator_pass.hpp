// One reconcile pass of the coordinator over everything it watches: the blocking REST writes,
// decided by the pure parts (shim_rollup, runtime_class) on the watched state. Each Shim:
//   - alive without our finalizer: the finalizer is added (update at the version read, 409 ->
//     read again, bounded);
//   - its RuntimeClass created, brought back in line, or left alone when it is not ours;
//   - its status written through the status subresource (merge patch) only when it differs;
//   - being deleted, with our finalizer, and no Node carrying its label or annotation: its
//     RuntimeClass deleted (if ours), then the finalizer removed.
// And a RuntimeClass of ours whose Shim is gone or now names another class is deleted. The slot
// Leases are the coordinator's alone (nodes write only their own Node: slot_hold.hpp): a failure a
// node says is marked on its grant (the halt); a slot is freed when its Shim is gone, its holder
// released it, or it failed for an older generation, and revoked, then freed, when its holder
// stopped renewing it (slot_reclaim_reason). Then the free slots are granted to the nodes that
// ask for them (slot_grant.hpp): a Lease held by the node, which takes it from its own watch. A
// slot freed in the same step is handed over (its Lease rewritten at the version judged, one
// write); a grant of any other name is a create, and a freed slot no grant takes is deleted.
// The status also carries the rollout (rollout_status.hpp): status.slots and RolloutHalted, with
// a Warning Event when a rollout halts.
// A failed write is reported and the pass goes on with the next Shim; the caller retries the
// whole pass later (everything here is idempotent). Nothing is written once `leading` says no,
// nor after a request the API server did not answer (a hang, a 5xx: the client's ApiPass,
// kubeapi/request_bound.hpp): the pass stops there, failed, and the caller's backoff retries.
// What a write returns goes into the view at once: a pass that runs before the watch has
// delivered our own write must not take the older object for the truth and write again.
#pragma once

#include "shimkeeper/cluster/model/conditions.hpp"
#include "shimkeeper/cluster/model/grant_book.hpp"
#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/shim_rollup.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_lease.hpp"
#include "shimkeeper/cluster/model/slot_view.hpp"
#include "shimkeeper/cluster/model/write_refusals.hpp"
#include "shimkeeper/kubeapi/api_client.hpp"
#include "shimkeeper/kubeapi/conflict_retry.hpp"
#include "shimkeeper/kubeapi/event_recorder.hpp"
#include "shimkeeper/util/log.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::cluster::coordinator {

// Our finalizer on every Shim: the Shim stays until no node carries it any more.
inline constexpr const char* k_uninstall_finalizer = "shim.containerd.x-k8s.io/uninstall";

// What the coordinator's watches hold.
struct ClusterView {
    std::map<std::string, nlohmann::json> shims;           // by name
    model::NodeViews nodes;                                // by name
    std::map<std::string, nlohmann::json> runtime_classes; // by name
    // What the API server refuses of nodes' writes to their own Nodes, from their Events.
    model::WriteRefusals write_refusals;
    // The rollout slot Leases (the candidacy's Lease watch), judged with their holders' entries
    // (slot_view.hpp).
    std::vector<model::SlotSeen> slots;
    model::HoldClock holds;             // each node's slot entries, as the Node watch showed them
    model::SlotEventCounts slot_events; // SlotBoard::events() at the pass
    bool slots_synced = false;
    std::string ns; // the agent namespace, where the slot Leases live
};

// What one term remembers between its passes, apart from what the watches hold: a new term
// starts with none of it (coordinator.cpp).
struct TermMemory {
    model::GrantBook grants;
    // When each Shim's status was last written (model::k_progress_interval).
    std::map<std::string, std::chrono::steady_clock::time_point> status_written;
};

struct PassOutcome {
    unsigned writes = 0;
    unsigned grants = 0; // rollout slots granted
    unsigned halts = 0;  // rollouts found halted anew (each with its RolloutHalted Event)
    // The node counts of each Shim this pass looked at (its status.nodes), for /metrics.
    std::map<std::string, model::NodeCounts> nodes;
    // The earliest a status held back (only progress changed, written too recently) is due.
    std::optional<std::chrono::steady_clock::time_point> progress_due;
    std::vector<util::Error> errors;
    bool interrupted = false; // leadership ended during the pass
    // The grant step stopped after k_grant_batch_time with grants left to make: the caller arms
    // a grant step that reads the watches first.
    bool grants_left = false;
};

// How long one grant step creates slots before it lets the loop read the watches: its creates
// are blocking, and on a loaded API server (a create may take seconds) a batch decided before a
// failure came would go on granting for seconds after it. Its first group is always sent.
inline constexpr std::chrono::milliseconds k_grant_batch_time{200};
// How many grants of a step go to the API server together (ApiClient::write_together): a wave's
// slots come free within a moment of each other, and the next nodes' grants one after another
// would leave the last of them waiting a round trip per grant before it. A group is never cut
// by a failure seen meanwhile, so up to this many grants decided before a failure was read can
// still land after it: kept small, as the grants a halt may come too late for.
inline constexpr std::size_t k_grants_together = 4;

class CoordinatorPass {
public:
    CoordinatorPass(kubeapi::ApiClient& client, kubeapi::EventRecorder& events,
                    const util::Log& log, std::function<bool()> leading)
        : m_client(client), m_events(events), m_log(log), m_leading(std::move(leading)) {}

    PassOutcome run(ClusterView& view, TermMemory& term);
    // Only the slot steps of run(): failures recorded, slots freed, and the free slots granted to
    // the nodes that ask. The coordinator runs it as soon as a slot goes (a node says done) or a
    // node asks, so neither a handoff nor a rollout's start waits for a whole pass. `when` ends
    // each grant's log line: " (at once: ...)".
    PassOutcome run_grants(ClusterView& view, TermMemory& term, const std::string& when);

private:
    void begin(ClusterView& view, TermMemory& term); // what run() and run_grants() start from
    void reconcile_shim(const nlohmann::json& shim);
    void finalize(const nlohmann::json& shim);
    std::optional<model::Condition> ensure_runtime_class(const nlohmann::json& shim);
    void write_status(const nlohmann::json& shim, const nlohmann::json& status);
    void remove_orphans();
    // Judges the slots: revokes those whose holder went silent, and notes in m_freeing those to
    // free (their holder released them, ...), which grant_slots() hands over or
    // delete_unclaimed_slots() deletes.
    void reclaim_slots();
    // The slots judged free that no grant of this step took: deleted together, each at the
    // version judged (a 409 when it changed since: it stays).
    void delete_unclaimed_slots();
    // The failures nodes said on their Node, marked on their grant (or a failed Lease of their
    // own): the halt (slot_view.hpp).
    void record_failures();
    bool mark_grant_failed(const model::SlotSeen& grant, const model::SlotHold& hold);
    bool create_failed_marker(const std::string& node, const model::SlotHold& hold);
    void revoke_slot(const model::SlotSeen& slot, const std::string& why);
    // Deletes a slot revoked long enough, unless its holder's entry changed since the revoke
    // judged it (a quorum read of the Node): then the revoke is withdrawn.
    bool holder_still_silent(const model::SlotSeen& slot);
    void put_slot(const nlohmann::json& lease);
    // Writes a changed slot Lease (revoke, its withdrawal, a failure): whether it was written.
    bool update_slot(const nlohmann::json& lease, const std::string& what);
    // `when` ends the log line of each grant: which path made it. A grant of a name being freed
    // hands that Lease over; one of any other name creates it.
    void grant_slots(const std::string& when);
    nlohmann::json with_rollout(const nlohmann::json& shim, const model::Rollup& rollup,
                                nlohmann::json status);
    bool delete_runtime_class(const nlohmann::json& runtime_class, const std::string& why);
    util::Expected<kubeapi::Changed> change_finalizer(const nlohmann::json& shim, bool present);
    void emit(const nlohmann::json& shim, kubeapi::EventType type, const std::string& reason,
              const std::string& action, const std::string& note);
    void failed(const std::string& what, util::Error error);
    // True once a request of this pass got no answer; the pass then counts as failed.
    bool api_silent();

    kubeapi::ApiClient& m_client;
    kubeapi::EventRecorder& m_events;
    const util::Log& m_log;
    std::function<bool()> m_leading;
    ClusterView* m_view = nullptr; // during run()
    TermMemory* m_term = nullptr;
    // Failures record_failures() could not record: they halt this pass's grants all the same.
    std::vector<model::SlotHold> m_unrecorded;
    struct Freeing {
        model::SlotSeen slot; // the version judged free
        std::string why;
    };
    std::map<std::string, Freeing> m_freeing; // by Lease name, until handed over or deleted
    PassOutcome m_outcome;
};

} // namespace shimkeeper::cluster::coordinator
