// Whose word counts for a Shim's rollout (pure). A node's credential writes its own Node's shim
// keys (its slot requests among them) and creates slot Leases held by itself, for any Shim:
// admission sees one request, not which Shims select the node. So the coordinator judges it:
//   - a slot request counts only for a Shim that selects the node (its labels as the
//     coordinator's watch holds them), or that the node still carries (its readiness label or
//     its state annotation): a node the Shim no longer selects asks for a slot to remove it, and
//     a relabelled node must still uninstall within the rollout's bound. A node that claims to
//     carry a Shim it never had gets a slot it could have created itself; it stalls, never halts.
//   - a failed slot halts its Shim only when its holder is a node the Shim selects, or a node the
//     coordinator does not know (deleted, or not seen yet: a failure is kept rather than lost).
//     A failure from a node the Shim does not select halts nothing, including a removal that
//     failed on a node the Shim no longer selects (that node says so on its own Node and in
//     Events); such a slot is freed once it has stood unchanged for a lease, by when a Node
//     watch that lagged behind the Lease watch has caught up, so it does not hold a slot index.
#pragma once

#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/slot_lease.hpp"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

// Every node's slot requests (node -> Shim -> request) that count: for Shims in `shims` (by name)
// that select the node or that it carries.
std::map<std::string, SlotRequests>
counted_slot_requests(const NodeViews& nodes, const std::map<std::string, nlohmann::json>& shims);

// Whether the failed `slot` of `shim` halts it (see above).
bool failure_counts(const SlotLease& slot, const nlohmann::json& shim, const NodeViews& nodes);

// The failed slot of `target`'s generation that halts it, if any.
const SlotSeen* halting_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target,
                             const nlohmann::json& shim, const NodeViews& nodes);

// Why the coordinator frees a failed slot that does not count (its holder is a node the Shim
// does not select), once it stood unchanged for the lease; nullopt otherwise.
std::optional<std::string> foreign_failure_reason(const SlotSeen& slot, const nlohmann::json& shim,
                                                  const NodeViews& nodes,
                                                  std::chrono::steady_clock::time_point now);

// When the first failed slot of `slots` that does not count may be freed (the coordinator's next
// look: no event comes then), nullopt when there is none.
std::optional<std::chrono::steady_clock::time_point>
next_foreign_failure(const std::vector<SlotSeen>& slots,
                     const std::map<std::string, nlohmann::json>& shims, const NodeViews& nodes);

} // namespace shimkeeper::cluster::model
