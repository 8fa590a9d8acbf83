// A handler is never pulled from under running pods. A shim that the current
// generation runs and the desired state drops (a Shim deleted or no longer selecting the node, a
// file in shims.d/ removed) is a removal; while any pod sandbox containerd knows was created with
// its handler, the removal waits and the shim stays installed exactly as it runs. A container of
// such a pod that restarts would otherwise fail, and its sandbox could not be torn down cleanly.
//
// Decisions:
//   - every sandbox counts, ready or not: a NOTREADY one is still stopped and removed through its
//     runtime, and the kubelet removes the sandboxes of a deleted pod, so the wait ends by itself
//     once the pods are gone;
//   - the same rule for cluster Shims and files: a removal of a handler in use waits, whoever
//     asked for it; an operator forces it by ending the pods (README, "Removal");
//   - only removals: a kept shim whose handler changes in an upgrade is not held back here;
//   - a ListPodSandbox that fails holds every removal back (with that reason): not knowing is
//     not a reason to pull a handler;
//   - without a containerd client (bake: containerd does not run in an image; --no-restart: the
//     restart, and so the moment the handler goes, belongs to someone else) nothing waits.
// The guard runs before the rollout gate, so a blocked removal takes no rollout slot.
#pragma once

#include "shimkeeper/health/pod_sandboxes.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/spec/sources.hpp"
#include "shimkeeper/store/state.hpp"

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace shimkeeper::reconcile {

struct BlockedRemoval {
    std::string handler;
    std::size_t pods = 0; // sandboxes using the handler (0 when they could not be listed)
    std::string reason;   // "blocked by 2 pod(s): ns/a, ns/b", or why the list is unknown
};
using BlockedRemovals = std::map<std::string, BlockedRemoval>; // by shim name

// How often the daemon looks again while a removal is blocked (cmd_run.cpp): a reconcile that
// changes nothing costs one ListPodSandbox and no API request.
inline constexpr std::chrono::seconds k_blocked_removal_recheck{10};

// Pure: the shims the current generation runs, absent from `desired` by name, whose handler no
// desired shim keeps and at least one sandbox uses.
BlockedRemovals blocked_removals(const std::vector<spec::ShimSpec>& desired,
                                 const store::StoreState& state,
                                 const std::vector<health::PodSandboxInfo>& sandboxes);

// Pure: `desired` plus every blocked shim as the current generation runs it (origin kept, so a
// cluster Shim is still told apart from a file).
util::Expected<spec::DesiredShims> keep_blocked(const spec::DesiredShims& desired,
                                                const store::StoreState& state,
                                                const BlockedRemovals& blocked);

struct GuardedDesired {
    spec::DesiredShims desired; // what the transaction may do now
    BlockedRemovals blocked;    // removals that wait
};

// Asks containerd for its sandboxes when the desired state removes any shim.
util::Expected<GuardedDesired> guard_removals(const Node& node, const spec::DesiredShims& desired);

} // namespace shimkeeper::reconcile
