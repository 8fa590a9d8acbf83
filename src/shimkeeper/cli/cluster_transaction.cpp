#include "shimkeeper/cli/cluster_transaction.hpp"

#include "shimkeeper/reconcile/commit_bound.hpp"

namespace shimkeeper::cli {

std::unique_ptr<cluster::agent::ClusterReport> cluster_report_for(const Context& ctx) {
    if (!ctx.cluster) {
        return nullptr;
    }
    return cluster::agent::ClusterReport::create(*ctx.cluster, ctx.store, ctx.log);
}

util::Expected<std::unique_ptr<cluster::agent::RolloutGate>>
rollout_gate_for(const Context& ctx, reconcile::Restart restart,
                 const cluster::model::SlotBoard* watched, cluster::agent::ClaimedSlots claimed) {
    if (!ctx.cluster) {
        return nullptr;
    }
    return cluster::agent::RolloutGate::create(*ctx.cluster, ctx.store, ctx.log, watched,
                                               reconcile::longest_commit(ctx.settings, restart),
                                               std::move(claimed));
}

} // namespace shimkeeper::cli
