#include "shimkeeper/cluster/model/rollout_status.hpp"

#include "shimkeeper/cluster/model/node_scope.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"

namespace shimkeeper::cluster::model {

using nlohmann::json;

RolloutStatus rollout_status(const json& shim, const Rollup& rollup,
                             const std::vector<SlotSeen>& slots, const NodeViews& nodes) {
    RolloutStatus out;
    out.halted.type = "RolloutHalted";
    out.halted.status = ConditionStatus::false_;
    auto policy = rollout_policy_of(shim);
    if (!policy) {
        out.halted.reason = "InvalidSpec";
        out.halted.message = policy.error().message();
        return out;
    }
    if (!policy->rolling) {
        out.halted.reason = "Recreate";
        out.halted.message = "every selected node changes at once (rolloutStrategy recreate)";
        return out;
    }
    const int count = resolve_slots(*policy, rollup.counts.selected);
    out.slots = count;
    const RolloutTarget target{kubeapi::name_of(shim),
                               shim.value(json::json_pointer("/metadata/uid"), std::string()),
                               rollup.generation, count};
    if (const SlotSeen* failed = halting_slot(slots, target, shim, nodes)) {
        out.halted.status = ConditionStatus::true_;
        out.halted.reason = "NodeFailed";
        out.halted.message = halt_message(failed->lease);
        return out;
    }
    out.halted.reason = "Rolling";
    out.halted.message =
        "at most " + std::to_string(count) + " node" + (count == 1 ? "" : "s") + " change at once";
    return out;
}

} // namespace shimkeeper::cluster::model
