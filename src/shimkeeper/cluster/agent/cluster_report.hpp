// Cluster mode around a transaction: what the node's own Node says about its cluster shims.
//   before the first change: a cluster shim about to go loses its label (no new pods are
//   scheduled onto a handler that is leaving), one about to be installed or upgraded says
//   `installing` (and loses its label); if that patch fails and the change removes or replaces
//   the labelled handler, the transaction does not start (labels_to_take_off_first);
//   after: `installed` with the label for every selected Shim the node runs healthy, `failed`
//   with the reason and no label where the transaction failed or the Shim does not validate,
//   `conflict` where a file in shims.d/ won, `removing` without the label and with the reason
//   (`blocked by N pod(s) ...`) where a removal waits for pods that use the handler, and nothing at
//   all for Shims that do not select this node (or are gone).
// The states are derived from the node and the reading every time, so a report lost to an
// outage is sent by the next reconcile.
#pragma once

#include "shimkeeper/cluster/agent/node_reporter.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/reconcile/removal_guard.hpp"
#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/log.hpp"

#include <map>
#include <memory>
#include <set>
#include <string>

namespace shimkeeper::cluster::agent {

// How the transaction ended, as far as the Node is told: why it failed (empty when it did not)
// and the shims it changed. Whether each Shim is installed is read from the store afterwards.
struct TxnSummary {
    std::string reason;
    std::set<std::string> touched;

    static TxnSummary of(const reconcile::Outcome& outcome);
    static TxnSummary refused(const util::Error& error);
};

class ClusterReport {
public:
    // nullptr when the cluster was not read (the load failed before that). The references must
    // outlive the report.
    static std::unique_ptr<ClusterReport> create(const ClusterSource& cluster,
                                                 const store::Store& store, const util::Log& log);

    // Hooks the before-change report into the transaction.
    void attach(reconcile::Node& node);
    // The before-change report (what attach() hooks in), carrying `committing`, the rollout
    // gate's slot entries with their committing marks, in the same write (NodeReport). True
    // when that write was sent and carried them; false when none was (the report failed, which
    // only a change that must take a label off first turns into an error).
    util::Expected<bool> before_change(const reconcile::NodePlan& plan,
                                       const store::StoreState& state,
                                       std::vector<model::SlotHold> committing = {});
    // After the transaction (or its refusal): reads the store to tell what the node runs.
    // `waiting`: Shims held back for a rollout slot (rollout_gate.hpp): the Node keeps saying
    // what it said of them. `blocked`: removals that wait for pods (removal_guard.hpp): no label,
    // `removing` with the reason.
    // `requests`: the slots this node now waits for a grant of (the daemon's; nullopt: `apply`).
    // `releases`: the slots the transaction released, said in the same write (NodeReport).
    util::Expected<void> after(const spec::DesiredShims& desired,
                               const util::Expected<reconcile::Outcome>& outcome,
                               reconcile::Restart restart,
                               const std::map<std::string, std::string>& waiting = {},
                               const reconcile::BlockedRemovals& blocked = {},
                               std::optional<model::SlotRequests> requests = std::nullopt,
                               std::vector<model::SlotHold> releases = {});
    // After a load that failed: every selecting Shim that does not validate is `failed`.
    util::Expected<void> after_invalid();

private:
    ClusterReport(const ClusterSource& cluster, const store::Store& store, const util::Log& log,
                  ClusterReading reading)
        : m_store(store), m_log(log), m_reading(std::move(reading)),
          m_reporter(cluster, m_reading, log) {}

    const store::Store& m_store;
    const util::Log& m_log;
    ClusterReading m_reading;
    NodeReporter m_reporter;
};

// Pure, for tests: the reports themselves.
NodeReport report_before_change(const ClusterReading& reading, const reconcile::NodePlan& plan,
                                const store::StoreState& state);
// The changes that must not start while the Node still carries a shim's label, each as
// "removing demo" or "changing demo from handler a to handler b": a cluster shim's removal, and
// any change after which the labelled handler is no longer served (the RuntimeClass selects the
// label's value). An upgrade that keeps the labelled handler may go on with the label on.
std::vector<std::string> labels_to_take_off_first(const ClusterReading& reading,
                                                  const reconcile::NodePlan& plan,
                                                  const NodeReport& before);
NodeReport report_after(const ClusterReading& reading, const spec::DesiredShims& desired,
                        const TxnSummary& txn, const store::StoreState& state,
                        reconcile::Restart restart,
                        const std::map<std::string, std::string>& waiting = {},
                        const reconcile::BlockedRemovals& blocked = {});
NodeReport report_invalid(const ClusterReading& reading);

} // namespace shimkeeper::cluster::agent
