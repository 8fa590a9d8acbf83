#include "shimkeeper/reconcile/node_status.hpp"

namespace shimkeeper::reconcile {

NodeStatus node_status(const Outcome& outcome, const store::StoreState& state) {
    NodeStatus status;
    status.result = outcome.result;
    status.changed = outcome.changed;
    status.reason = outcome.reason;
    status.restarts = outcome.restarts;
    const store::Generation* current = state.current_generation();
    status.generation = current ? current->number : 0;
    if (current != nullptr) {
        status.installed = current->shims;
    }
    for (const ShimAction& action : outcome.plan.shims.actions) {
        ShimOutcome shim{action.name, action.handler, action.kind, "", "", false};
        if (const store::InstalledShim* have = current ? current->find(action.name) : nullptr) {
            shim.installed = true;
            shim.version = have->version;
            shim.digest = have->digest;
        }
        status.shims.push_back(std::move(shim));
    }
    for (const auto& change : outcome.plan.config_changes) {
        status.config_files.push_back(change.node_path.string());
    }
    return status;
}

} // namespace shimkeeper::reconcile
