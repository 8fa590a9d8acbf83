#include "shimkeeper/reconcile/removal_guard.hpp"

#include "shimkeeper/reconcile/record.hpp"

#include <algorithm>
#include <set>

namespace shimkeeper::reconcile {

namespace {

constexpr std::size_t k_pods_named = 3; // a reason stays one readable line

// The shims of the current generation that `desired` drops, with handlers no desired shim keeps.
std::vector<const store::InstalledShim*> removals(const std::vector<spec::ShimSpec>& desired,
                                                  const store::StoreState& state) {
    std::vector<const store::InstalledShim*> out;
    const store::Generation* current = state.current_generation();
    if (current == nullptr) {
        return out;
    }
    std::set<std::string> names;
    std::set<std::string> handlers;
    for (const auto& spec : desired) {
        names.insert(spec.name);
        handlers.insert(spec.handler);
    }
    for (const auto& shim : current->shims) {
        if (!names.contains(shim.name) && !handlers.contains(shim.handler)) {
            out.push_back(&shim);
        }
    }
    return out;
}

std::string pod_label(const health::PodSandboxInfo& pod) {
    const std::string name = pod.name.empty() ? pod.id.substr(0, 12) : pod.name;
    return pod.namespace_name.empty() ? name : pod.namespace_name + "/" + name;
}

} // namespace

BlockedRemovals blocked_removals(const std::vector<spec::ShimSpec>& desired,
                                 const store::StoreState& state,
                                 const std::vector<health::PodSandboxInfo>& sandboxes) {
    BlockedRemovals out;
    for (const store::InstalledShim* shim : removals(desired, state)) {
        std::vector<std::string> pods;
        for (const auto& pod : sandboxes) {
            if (pod.handler == shim->handler) {
                pods.push_back(pod_label(pod));
            }
        }
        if (pods.empty()) {
            continue;
        }
        std::string named;
        for (std::size_t i = 0; i < pods.size() && i < k_pods_named; ++i) {
            named += (i == 0 ? "" : ", ") + pods[i];
        }
        if (pods.size() > k_pods_named) {
            named += ", ...";
        }
        out[shim->name] = {shim->handler, pods.size(),
                           "blocked by " + std::to_string(pods.size()) + " pod(s) on handler " +
                               shim->handler + ": " + named};
    }
    return out;
}

util::Expected<spec::DesiredShims> keep_blocked(const spec::DesiredShims& desired,
                                                const store::StoreState& state,
                                                const BlockedRemovals& blocked) {
    spec::DesiredShims out = desired;
    const store::Generation* current = state.current_generation();
    for (const auto& [name, why] : blocked) {
        const store::InstalledShim* have = current ? current->find(name) : nullptr;
        if (have == nullptr) {
            continue;
        }
        spec::ShimSpec kept = TRY(spec_of(*have, current->number));
        kept.location = {have->origin, 0, 0};
        out.shims.push_back(std::move(kept));
    }
    return out;
}

util::Expected<GuardedDesired> guard_removals(const Node& node, const spec::DesiredShims& desired) {
    GuardedDesired out{desired, {}};
    if (node.containerd == nullptr) {
        return out;
    }
    const store::StoreState state = TRY(node.store.load_state());
    const auto dropped = removals(desired.shims, state);
    if (dropped.empty()) {
        return out;
    }
    auto sandboxes = node.containerd->pod_sandboxes(std::chrono::seconds(10));
    if (!sandboxes) {
        for (const store::InstalledShim* shim : dropped) {
            out.blocked[shim->name] = {shim->handler, 0,
                                       "waits: the pod sandboxes using handler " + shim->handler +
                                           " cannot be listed (" + sandboxes.error().message() +
                                           ")"};
        }
    } else {
        out.blocked = blocked_removals(desired.shims, state, *sandboxes);
    }
    for (const auto& [name, why] : out.blocked) {
        node.log.debug("removal of " + name + " " + why.reason, {.shim = name});
    }
    out.desired = TRY(keep_blocked(desired, state, out.blocked));
    return out;
}

} // namespace shimkeeper::reconcile
