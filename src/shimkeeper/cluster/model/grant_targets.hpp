// The rolling Shim generations slots may be granted for, each with its slot count and whether it
// halted: a failed slot of the generation that counts (node_scope.hpp), or a failure a node said
// that is not recorded on a slot yet (`unrecorded_failures`, the node's entries: the write failed,
// and it halts all the same).
#pragma once

#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_view.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

// The tests' fault switches that bend the targets (reconcile/fault.hpp); the caller reads them.
struct GrantTargetFaults {
    bool grant_over_max = false; // one slot more than maxUpdate allows
    bool halt_ignored = false;   // a failed generation still granted
};

std::vector<GrantTarget> grant_targets(const std::map<std::string, nlohmann::json>& shims,
                                       const std::vector<SlotSeen>& slots, const NodeViews& nodes,
                                       const std::vector<SlotHold>& unrecorded_failures,
                                       GrantTargetFaults faults = {});

} // namespace shimkeeper::cluster::model
