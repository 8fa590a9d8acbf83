// What the coordinator says about a Shim's rollout (pure): `status.slots` (maxUpdate resolved
// against the selected nodes, for a rolling Shim) and the RolloutHalted condition, True while a
// slot of the current generation is marked failed (it names the node, its reason and the two ways
// to resume). The slots are those the coordinator's Lease watch holds (slot_board.hpp).
#pragma once

#include "shimkeeper/cluster/model/conditions.hpp"
#include "shimkeeper/cluster/model/shim_rollup.hpp"
#include "shimkeeper/cluster/model/slot_lease.hpp"

#include <optional>
#include <vector>

namespace shimkeeper::cluster::model {

struct RolloutStatus {
    std::optional<int> slots; // nullopt: not rolling (or an invalid strategy)
    Condition halted;
};

// The resume command in the message names the namespace the failed slot Lease lives in. A
// failed slot halts only when its node's failure counts for the Shim (node_scope.hpp: `nodes`).
RolloutStatus rollout_status(const nlohmann::json& shim, const Rollup& rollup,
                             const std::vector<SlotSeen>& slots, const NodeViews& nodes);

} // namespace shimkeeper::cluster::model
