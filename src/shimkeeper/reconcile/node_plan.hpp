// The one plan of a node: what `plan` prints, what `apply` executes and what status reports.
// Shim actions (plan.hpp), the bin/ links to flip, the new text of every containerd config file,
// whether containerd must restart and whether a new generation is recorded. It reads the node
// (links, config files, containerd's default config) but changes nothing; `apply` stages the
// artifacts first, so that every digest is known, and then asks the same function.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/plan.hpp"
#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/reconcile/plan.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <optional>
#include <vector>

namespace shimkeeper::reconcile {

struct NodePlan {
    Plan shims;
    std::vector<JournalLink> links;
    std::vector<containerd::FileChange> config_changes;
    bool restart_needed = false;    // containerd must restart to load config_changes
    std::optional<int> switch_to;   // rollback: make this stored generation current
    bool artifacts_unknown = false; // some digest is known only after a download (plan only)

    // apply would change nothing: no download, no write, no restart, no new generation.
    bool converged() const;
};

struct PlanView {
    const util::HostRoot& root;
    const store::Store& store;
    const containerd::Detection& detection;
};

// `existing_generation`: the target is that stored generation (rollback), not a new one.
util::Expected<NodePlan> plan_node(const PlanView& view, const std::vector<spec::ShimSpec>& desired,
                                   const std::vector<std::optional<KnownArtifact>>& artifacts,
                                   const store::StoreState& state,
                                   std::optional<int> existing_generation = std::nullopt);

} // namespace shimkeeper::reconcile
