#include "shimkeeper/reconcile/node_plan.hpp"

#include "shimkeeper/containerd/runtime_entry.hpp"

#include <algorithm>
#include <set>

namespace shimkeeper::reconcile {

namespace {

// Link changes: every target shim's link, and the links of shims that go away. A target whose
// artifact is not downloaded yet gets a placeholder target: it changes, but to what is known
// only after the download.
std::vector<JournalLink> plan_links(const store::Store& store,
                                    const std::vector<store::InstalledShim>& target,
                                    const store::Generation* current) {
    std::vector<JournalLink> links;
    std::set<std::string> wanted;
    for (const auto& shim : target) {
        wanted.insert(shim.binary);
        std::string after = shim.binary_path.empty()
                                ? "(after download)"
                                : store.binary_target_node_path(shim.digest, shim.binary_path);
        JournalLink link{shim.binary, store.binary_link_target(shim.binary), after};
        if (link.before != link.after) {
            links.push_back(std::move(link));
        }
    }
    if (current != nullptr) {
        for (const auto& shim : current->shims) {
            auto before = store.binary_link_target(shim.binary);
            if (!wanted.contains(shim.binary) && before) {
                links.push_back({shim.binary, before, std::nullopt});
                wanted.insert(shim.binary);
            }
        }
    }
    return links;
}

} // namespace

bool NodePlan::converged() const {
    return !shims.new_generation && !switch_to && links.empty() && config_changes.empty() &&
           !artifacts_unknown;
}

util::Expected<NodePlan> plan_node(const PlanView& view, const std::vector<spec::ShimSpec>& desired,
                                   const std::vector<std::optional<KnownArtifact>>& artifacts,
                                   const store::StoreState& state,
                                   std::optional<int> existing_generation) {
    const store::Generation* current = state.current_generation();
    NodePlan plan;
    plan.shims = compute_plan(desired, artifacts, current);
    plan.artifacts_unknown = std::any_of(artifacts.begin(), artifacts.end(),
                                         [](const auto& a) { return !a.has_value(); });
    if (existing_generation) {
        plan.shims.new_generation = false;
        if (state.current != existing_generation) {
            plan.switch_to = existing_generation;
        }
    }
    plan.links = plan_links(view.store, plan.shims.target, current);

    std::vector<containerd::DesiredRuntime> runtimes;
    for (std::size_t i = 0; i < desired.size(); ++i) {
        const store::InstalledShim& record = plan.shims.target[i];
        // The marker names the digest; an unverified artifact not downloaded yet has none.
        runtimes.push_back(containerd::desired_runtime(
            desired[i], view.store.binary_node_path(desired[i].binary).string(),
            record.digest.empty() ? "unverified" : record.digest));
    }
    plan.config_changes = TRY(containerd::plan_edits(view.detection, runtimes, view.root));
    plan.restart_needed = containerd::needs_restart(view.detection, plan.config_changes);
    return plan;
}

} // namespace shimkeeper::reconcile
