#include "shimkeeper/reconcile/plan.hpp"

#include "shimkeeper/reconcile/record.hpp"

#include <algorithm>

namespace shimkeeper::reconcile {

const char* to_string(ActionKind kind) {
    switch (kind) {
    case ActionKind::install:
        return "install";
    case ActionKind::upgrade:
        return "upgrade";
    case ActionKind::unchanged:
        return "unchanged";
    case ActionKind::remove:
        return "remove";
    }
    return "unknown";
}

std::size_t Plan::count(ActionKind kind) const {
    return static_cast<std::size_t>(std::count_if(
        actions.begin(), actions.end(), [kind](const ShimAction& a) { return a.kind == kind; }));
}

Plan compute_plan(const std::vector<spec::ShimSpec>& desired,
                  const std::vector<std::optional<KnownArtifact>>& artifacts,
                  const store::Generation* current) {
    Plan plan;
    for (std::size_t i = 0; i < desired.size(); ++i) {
        const spec::ShimSpec& want = desired[i];
        const std::optional<KnownArtifact>& artifact = artifacts.at(i);
        store::InstalledShim record = artifact
                                          ? record_of(want, artifact->digest, artifact->binary_path)
                                          : record_of(want, want.fetch.sha256.value_or(""), "");
        ShimAction action;
        action.name = want.name;
        action.handler = want.handler;
        action.to_version = want.version;
        action.to_digest = record.digest;
        action.staged = artifact.has_value();
        const store::InstalledShim* have = current ? current->find(want.name) : nullptr;
        if (have == nullptr) {
            action.kind = ActionKind::install;
            plan.new_generation = true;
        } else {
            action.from_version = have->version;
            action.from_digest = have->digest;
            action.reasons = differences(record, *have);
            action.kind = action.reasons.empty() ? ActionKind::unchanged : ActionKind::upgrade;
            if (action.kind == ActionKind::unchanged) {
                action.to_digest = have->digest;
            }
            plan.new_generation = plan.new_generation || !action.reasons.empty();
        }
        plan.actions.push_back(std::move(action));
        plan.target.push_back(std::move(record));
    }
    if (current != nullptr) {
        std::vector<const store::InstalledShim*> removed;
        for (const store::InstalledShim& have : current->shims) {
            bool wanted = std::any_of(desired.begin(), desired.end(),
                                      [&](const spec::ShimSpec& s) { return s.name == have.name; });
            if (!wanted) {
                removed.push_back(&have);
            }
        }
        std::sort(removed.begin(), removed.end(),
                  [](auto* a, auto* b) { return a->name < b->name; });
        for (const store::InstalledShim* have : removed) {
            ShimAction action;
            action.kind = ActionKind::remove;
            action.name = have->name;
            action.handler = have->handler;
            action.from_version = have->version;
            action.from_digest = have->digest;
            plan.actions.push_back(std::move(action));
            plan.new_generation = true;
        }
    }
    return plan;
}

} // namespace shimkeeper::reconcile
