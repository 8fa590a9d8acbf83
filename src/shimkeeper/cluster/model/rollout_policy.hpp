// How a Shim rolls out (CLUSTER.md, "Rolling rollout and halt"): `spec.rolloutStrategy`.
//   absent, or type recreate    every selected node changes at once (no slots);
//   type rolling (the default   at most maxUpdate nodes change at once: a count, or a percentage
//   when the block is given)    of the selected nodes rounded up and at least 1 (DaemonSet's
//                               rule); without maxUpdate, 1.
// Pure. The coordinator resolves a percentage into `status.slots`; a node reads the count from
// there (it cannot count the selected nodes itself, it sees only its own Node).
#pragma once

#include "shimkeeper/util/error.hpp"

#include <nlohmann/json.hpp>
#include <optional>

namespace shimkeeper::cluster::model {

struct RolloutPolicy {
    bool rolling = false;
    int max_update = 1;         // a count, when percent is not set
    std::optional<int> percent; // 1..100
};

// Errors name the Shim and the field; the CRD refuses the same at admission.
util::Expected<RolloutPolicy> rollout_policy_of(const nlohmann::json& shim);

// The slot count for `selected` nodes: a count as is, a percentage rounded up, at least 1.
int resolve_slots(const RolloutPolicy& policy, int selected);

// The slot count a node uses: the count itself, or the coordinator's `status.slots` for a
// percentage, only while `status.observedGeneration` is the Shim's generation (nullopt until the
// coordinator has resolved it for this generation: a count for another one is never used).
std::optional<int> slots_for_node(const RolloutPolicy& policy, const nlohmann::json& shim);

} // namespace shimkeeper::cluster::model
