// Cluster mode's rolling rollout on the node (CLUSTER.md, "Rolling rollout and halt"): before a
// transaction, every rolling Shim whose change this node would make (install, upgrade, removal)
// needs a rollout slot; one it cannot get now is left exactly as the node runs it (or absent), so
// the transaction changes only what holds a slot. After the transaction a slot is released on
// success and marked failed on failure, which halts that Shim generation everywhere.
//
// Two promises are kept here. A slot is a real bound: attach() makes the
// transaction's steps before its first change (Node::before_change, around the Node report's
// own, and Node::recheck_before_change, the last, after the config backups and the journal)
// refuse unless every slot held is fresh (slot_keeper.hpp: confirmed by the API server within
// two thirds of its lease, never lost), so a node whose slot expired while it downloaded never
// writes config or restarts; the refused transaction is no failure of the Shim, its slot goes back
// and the node waits for one again. A halt halts only its Shim: finish() marks failed only the
// slots of Shims the failure is about (Outcome::blamed, Node::refused_about); a failure about
// nothing in particular (the API server, the disk) releases every slot and halts nothing.
//
// Decisions (README, "Rolling rollouts"): a node whose change for a Shim is nothing (already at the
// spec, a new generation that changed only rolloutStrategy) takes no slot; a percentage maxUpdate
// waits for the coordinator's `status.slots`; the daemon takes only slots the coordinator granted
// it, and its wake path may have claimed one already (ClaimedSlots), which the next reconcile uses;
// `apply` lists the slots granted to it (no watch), only when some Shim needs a slot, and asks for
// and waits a while for a grant itself. The node writes no Lease: its take, renewals, committing
// mark, failure and release are its own Node's (slot_hold.hpp); a claim young enough to use is
// taken by the first write of its entry, which goes with the `installing` report, anything else
// by a write of its own before the transaction (slot_keeper.hpp).
#pragma once

#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "shimkeeper/cluster/agent/slot_keeper.hpp"
#include "shimkeeper/cluster/model/slot_board.hpp"
#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/log.hpp"

#include <functional>
#include <map>
#include <memory>
#include <set>

namespace shimkeeper::cluster::agent {

// A rolling Shim this node has a change to make for.
struct SlotNeed {
    std::string shim;
    std::optional<model::RolloutTarget> target; // nullopt: slot count not resolved yet
    std::string why_unresolved;
};

// Pure: the rolling Shims of the reading whose desired spec differs from what the current
// generation runs for them (or that should go and are still installed). A Shim that a file in
// shims.d/ overrides is the file's business, not the rollout's.
std::vector<SlotNeed> slot_needs(const ClusterReading& reading, const spec::DesiredShims& desired,
                                 const store::StoreState& state);

// Pure: `desired` with every Shim in `held_back` as the current generation runs it (its stored
// spec, origin kept) or absent when it does not run it.
util::Expected<spec::DesiredShims> held_back_desired(const spec::DesiredShims& desired,
                                                     const store::StoreState& state,
                                                     const std::set<std::string>& held_back);

// The slots the daemon adopted between reconciles (agent_watches.hpp), by Shim name: not taken
// yet, each as of when its watch was up to date (HeldSlot::adopted).
using ClaimedSlots = std::map<std::string, HeldSlot>;

// Pure: the Shims whose slots a failed transaction marks failed (halting their rollout): those
// the failure is about, and only those; none for a failure about nothing in particular.
// `refused_about`: what Node::refused_about said, for a refusal (an Error).
std::set<std::string> shims_to_halt(const util::Expected<reconcile::Outcome>& outcome,
                                    const std::vector<std::string>& refused_about);

// Pure: the claimed slot for `target` (same Shim object and generation), taken from `claimed`,
// while the watch's view of it is recent enough to trust as it is (a third of the lease
// duration); what is left in `claimed` is not wanted and should be released.
std::optional<HeldSlot> use_claimed(ClaimedSlots& claimed, const model::RolloutTarget& target,
                                    std::chrono::steady_clock::time_point now);
// Pure: the claimed slot for `target` (same Shim object and generation) that is too old for
// use_claimed, taken from `claimed`. Its grant may still be this node's: the gate takes it again
// (a write and a read) instead of releasing it and asking for another, which on a loaded control
// plane cost a slot for a whole handoff.
std::optional<HeldSlot> take_expired_claim(ClaimedSlots& claimed,
                                           const model::RolloutTarget& target,
                                           std::chrono::steady_clock::time_point now);

class RolloutGate {
public:
    // nullptr when the cluster was not read. `watched`: the slots granted to this node (the
    // daemon's own-slot watch, slot_grant.hpp): admit() holds only those and otherwise waits for
    // a grant (also while that watch is closed or not synced yet: the daemon opens it for what
    // waits); nullptr (apply): admit() lists this node's grants, if any Shim needs one, and asks
    // for the missing ones and waits for them a while. `longest_commit`: what the transaction may
    // take past its point of no return (reconcile/commit_bound.hpp), the committing mark of its
    // slots. `claimed`: slots the daemon already claimed; admit() uses them or releases them. All
    // three references must outlive the gate.
    static util::Expected<std::unique_ptr<RolloutGate>>
    create(const ClusterSource& cluster, const store::Store& store, const util::Log& log,
           const model::SlotBoard* watched, std::chrono::seconds longest_commit,
           ClaimedSlots claimed = {});
    ~RolloutGate();

    // Takes what slots it can and narrows `desired` to what this node may change now; starts
    // renewing the slots taken.
    util::Expected<spec::DesiredShims> admit(const spec::DesiredShims& desired);
    // Shim -> why it waits (halted, every slot busy, its slot lost before the point of no
    // return: read it again after the transaction).
    const std::map<std::string, std::string>& waiting() const { return m_waiting; }
    // Shim -> what it waits to roll out (nullopt: the slot count is not resolved yet), so that a
    // watcher can tell whether a change of the slots frees one for this node.
    const std::map<std::string, std::optional<model::RolloutTarget>>& waiting_for() const {
        return m_waiting_for;
    }
    // The new versions of the Shims admit() held back to wait for a slot, but not those of a
    // halted rollout: staging their artifacts now (reconcile::stage_ahead), before the node asks
    // for a slot, leaves the slot only the change to hold.
    const std::vector<spec::ShimSpec>& worth_staging_ahead() const { return m_worth_staging; }
    // The Shims this gate held a slot for (after finish(): whatever became of them). A node
    // that waits for one of them again asks anew (slot_grant.hpp).
    const std::set<std::string>& held_shims() const { return m_held_shims; }
    // The Node report before the change, carrying the slots' entries with their committing
    // marks in its write: true when it was sent with them (ClusterReport::before_change).
    using ReportCarrying = std::function<util::Expected<bool>(
        const reconcile::NodePlan&, const store::StoreState&, std::vector<model::SlotHold>)>;
    // Makes `node`'s before_change (kept) and recheck_before_change also refuse a transaction
    // that would pass its point of no return without a fresh slot for every Shim it holds one
    // for (the recheck after the write-ahead, with no request), and hears what a
    // refusal is about (Node::refused_about). With `report` (the kept before_change's own report,
    // able to carry slot entries), the committing mark of the slots held goes in its write: one
    // write of the Node says `installing` and that the node is past its point of no return; a
    // report that did not carry it leaves the renewal thread to write the mark on its own.
    void attach(reconcile::Node& node, ReportCarrying report = nullptr);
    // Releases the slots held (the transaction committed, or failed for another reason than
    // their Shim) or marks failed those of the Shims the failure is about. A failure is marked
    // at once, on its own: it halts a rollout. With `release_with_report`, the releases wait for
    // the Node report that follows (take_releases(), then report_released()), so that one write
    // of the Node says the outcome and frees the slots; whatever that report did not carry is
    // released on its own by report_released() or, failing that, by the destructor.
    void finish(const util::Expected<reconcile::Outcome>& outcome,
                bool release_with_report = false);
    // The entries that release the slots finish() kept for the report, marked done (and counted
    // released by this process, SlotKeeper::released_hold).
    std::vector<model::SlotHold> take_releases();
    // After the report's write: `told` says whether it carried the releases; they are released
    // on their own when it did not.
    void report_released(const util::Expected<void>& told);

private:
    RolloutGate(const ClusterSource& cluster, const store::Store& store, const util::Log& log,
                kubeapi::Client client, const model::SlotBoard* watched,
                std::chrono::seconds longest_commit, ClaimedSlots claimed);
    struct KeptRelease {
        HeldSlot held;
        std::string done; // what the log says of it
    };
    void release_kept_on_their_own(const std::string& why);
    void release_unclaimed(SlotKeeper& keeper);
    // What a Shim waits for when its grant could not be taken (keeper.take gave nullopt).
    std::string why_not_taken(const std::string& shim, const model::SlotDecision& decision) const;
    void release_expired_claims_not_taken_again(SlotKeeper& keeper,
                                                const std::map<std::string, HeldSlot>& expired);
    void release_stale_grants(SlotKeeper& keeper, const std::vector<model::SlotSeen>& slots,
                              const std::vector<SlotNeed>& needs);
    util::Expected<std::vector<model::SlotSeen>>
    ask_and_list_grants(const std::vector<SlotNeed>& needs);
    util::Expected<void> confirm_fresh_slots();
    // The last check before the first change: every slot renewed with its committing mark
    // (m_longest_commit), confirmed, and fresh.
    util::Expected<void> mark_slots_committing();
    // The report's write carrying the committing marks (attach()); false when it did not.
    util::Expected<bool> report_with_committing_marks(const ReportCarrying& report,
                                                      const reconcile::NodePlan& plan,
                                                      const store::StoreState& state);
    util::Expected<void> refuse_unless_every_slot(
        const std::vector<HeldSlot>& slots,
        std::optional<std::string> (*why_not)(const HeldSlot&,
                                              std::chrono::steady_clock::time_point));

    const ClusterSource& m_cluster;
    const store::Store& m_store;
    const util::Log& m_log;
    kubeapi::Client m_client;
    const model::SlotBoard* m_watched;
    std::chrono::seconds m_longest_commit;
    ClaimedSlots m_claimed;
    std::map<std::string, std::string> m_waiting;
    std::map<std::string, std::optional<model::RolloutTarget>> m_waiting_for;
    std::vector<spec::ShimSpec> m_worth_staging;
    std::vector<HeldSlot> m_held;
    std::vector<KeptRelease> m_kept_releases; // finish()'s, for the report
    std::set<std::string> m_held_shims;
    std::vector<std::string> m_refused_about;
    std::unique_ptr<SlotRenewal> m_renewal;
};

} // namespace shimkeeper::cluster::agent
