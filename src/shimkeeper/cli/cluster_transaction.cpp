#include "shimkeeper/cli/cluster_transaction.hpp"

namespace shimkeeper::cli {

std::unique_ptr<cluster::agent::ClusterReport> cluster_report_for(const Context& ctx) {
    if (!ctx.cluster) {
        return nullptr;
    }
    return cluster::agent::ClusterReport::create(*ctx.cluster, ctx.store, ctx.log);
}

util::Expected<std::unique_ptr<cluster::agent::RolloutGate>>
rollout_gate_for(const Context& ctx, const cluster::model::SlotBoard* watched,
                 cluster::agent::ClaimedSlots claimed) {
    if (!ctx.cluster) {
        return nullptr;
    }
    return cluster::agent::RolloutGate::create(*ctx.cluster, ctx.store, ctx.log, watched,
                                               std::move(claimed));
}

} // namespace shimkeeper::cli
