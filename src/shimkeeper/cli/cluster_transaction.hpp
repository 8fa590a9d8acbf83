// What cluster mode puts around a transaction in `apply` and `run`, made for a command's Context:
// the Node report (cluster/agent/cluster_report.hpp) and the rollout gate
// (cluster/agent/rollout_gate.hpp), handed to cluster/agent/transaction_hooks.hpp, which alone
// orders them around the transaction. Both are nullptr without [kube] or before the cluster was
// read; both keep references into `ctx`, which must outlive them.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/cluster/agent/cluster_report.hpp"
#include "shimkeeper/cluster/agent/rollout_gate.hpp"

#include <memory>

namespace shimkeeper::cli {

std::unique_ptr<cluster::agent::ClusterReport> cluster_report_for(const Context& ctx);

// `restart`: the transaction's (it bounds how long the gate's slots are held past the point of
// no return); `watched`: the daemon's slot board (nullptr for apply); `claimed`: slots the daemon
// took.
util::Expected<std::unique_ptr<cluster::agent::RolloutGate>>
rollout_gate_for(const Context& ctx, reconcile::Restart restart,
                 const cluster::model::SlotBoard* watched,
                 cluster::agent::ClaimedSlots claimed = {});

} // namespace shimkeeper::cli
