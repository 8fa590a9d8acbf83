#include "shimkeeper/cluster/model/grant_targets.hpp"

#include "shimkeeper/cluster/model/node_scope.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"

#include <algorithm>

namespace shimkeeper::cluster::model {

using nlohmann::json;

std::vector<GrantTarget> grant_targets(const std::map<std::string, json>& shims,
                                       const std::vector<SlotSeen>& slots, const NodeViews& nodes,
                                       const std::vector<SlotHold>& unrecorded_failures,
                                       GrantTargetFaults faults) {
    std::vector<GrantTarget> out;
    for (const auto& [name, shim] : shims) {
        auto policy = rollout_policy_of(shim);
        if (!policy || !policy->rolling) {
            continue;
        }
        const auto count = slots_for_node(*policy, shim);
        if (!count) {
            continue;
        }
        RolloutTarget target{name, shim.value(json::json_pointer("/metadata/uid"), ""),
                             shim.value(json::json_pointer("/metadata/generation"), 0L),
                             *count + (faults.grant_over_max ? 1 : 0)};
        const bool failing = std::ranges::any_of(unrecorded_failures, [&](const SlotHold& hold) {
            return hold.shim == name && hold.generation == target.generation;
        });
        const bool halted = (failing || halting_slot(slots, target, shim, nodes) != nullptr) &&
                            !faults.halt_ignored;
        out.push_back({std::move(target), halted});
    }
    return out;
}

} // namespace shimkeeper::cluster::model
