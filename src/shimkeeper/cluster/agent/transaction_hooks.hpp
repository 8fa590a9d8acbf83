// What cluster mode puts around one transaction of `apply` or `run`, in the one order that keeps
// its promises (both commands call this; neither orders the steps itself):
//   1. the Node report's hook on the node (labels off before the first change);
//   2. removals that wait for pods held back (such a removal takes no rollout slot);
//   3. the rollout gate's admission, then its hook, which wraps the report's: a slot is confirmed
//      fresh before and after the report's write, which carries the slots' committing marks
//      (one write of the Node says `installing` and that the node is past its point of no
//      return). Attached the other way round, the report's hook would replace the gate's and the
//      freshness check would silently go;
//   4. after the transaction, the gate's slots of the Shims the failure is about said failed at
//      once, before
//   5. the Node report of the outcome, which also releases the other slots held: one write of
//      the Node says the outcome and frees them (what it could not carry, the gate releases on
//      its own).
// Without [kube] (or before the cluster was read) there is no report and no gate: only step 2.
#pragma once

#include "shimkeeper/cluster/agent/cluster_report.hpp"
#include "shimkeeper/cluster/agent/rollout_gate.hpp"
#include "shimkeeper/reconcile/removal_guard.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace shimkeeper::cluster::agent {

class TransactionHooks {
public:
    // Makes the gate (nullptr: none) once removals are guarded: a gate made earlier would take
    // the daemon's claimed slots for a transaction that a failed guard then never runs.
    using GateMaker = std::function<util::Expected<std::unique_ptr<RolloutGate>>()>;

    // `report` may be nullptr.
    TransactionHooks(std::unique_ptr<ClusterReport> report, GateMaker make_gate)
        : m_report(std::move(report)), m_make_gate(std::move(make_gate)) {}

    // Steps 1 to 3 on `node`: what the transaction may do now. The hooks keep references into
    // this object, which must outlive the transaction.
    util::Expected<spec::DesiredShims> admit(reconcile::Node& node,
                                             const spec::DesiredShims& desired);
    // Step 4 (with a report, the releases wait for step 5); then the Shims that wait for a slot
    // and why (one lost before the point of no return waits too).
    const std::map<std::string, std::string>&
    finish(const util::Expected<reconcile::Outcome>& outcome);
    // Step 5, saying what finish() found waiting, with the releases. Nothing to say without a
    // report.
    util::Expected<void> tell(const spec::DesiredShims& desired,
                              const util::Expected<reconcile::Outcome>& outcome,
                              reconcile::Restart restart,
                              std::optional<model::SlotRequests> requests = std::nullopt);

    // Removals that wait for pods (after admit()).
    const reconcile::BlockedRemovals& blocked() const { return m_blocked; }
    // The gate (after admit()), for `run`'s staging ahead and its watches; nullptr without one.
    RolloutGate* gate() const { return m_gate.get(); }

private:
    std::unique_ptr<ClusterReport> m_report;
    GateMaker m_make_gate;
    std::unique_ptr<RolloutGate> m_gate;
    reconcile::BlockedRemovals m_blocked;
    std::map<std::string, std::string> m_waiting; // finish()'s
};

} // namespace shimkeeper::cluster::agent
