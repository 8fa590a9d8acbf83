#include "shimkeeper/cluster/model/node_scope.hpp"

#include "shimkeeper/cluster/model/shim_object.hpp"

namespace shimkeeper::cluster::model {

using nlohmann::json;

std::map<std::string, SlotRequests>
counted_slot_requests(const NodeViews& nodes, const std::map<std::string, json>& shims) {
    std::map<std::string, SlotRequests> out;
    for (const auto& [name, node] : nodes) {
        SlotRequests asked = slot_requests_on(node);
        std::erase_if(asked, [&](const auto& entry) {
            const auto shim = shims.find(entry.first);
            return shim == shims.end() || (!selects_node(shim->second, node.labels) &&
                                           !shim_on_node(node, entry.first).carries());
        });
        if (!asked.empty()) {
            out[name] = std::move(asked);
        }
    }
    return out;
}

bool failure_counts(const SlotLease& slot, const json& shim, const NodeViews& nodes) {
    const auto holder = nodes.find(slot.holder);
    return holder == nodes.end() || selects_node(shim, holder->second.labels);
}

const SlotSeen* halting_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target,
                             const json& shim, const NodeViews& nodes) {
    for (const SlotSeen& slot : slots) {
        const SlotLease& lease = slot.lease;
        if (lease.shim == target.shim && lease.uid == target.uid &&
            lease.generation == target.generation && !lease.failed.empty() &&
            failure_counts(lease, shim, nodes)) {
            return &slot;
        }
    }
    return nullptr;
}

std::optional<std::string> foreign_failure_reason(const SlotSeen& slot, const json& shim,
                                                  const NodeViews& nodes,
                                                  std::chrono::steady_clock::time_point now) {
    const SlotLease& lease = slot.lease;
    if (lease.failed.empty() || failure_counts(lease, shim, nodes) ||
        now - slot.seen <= slot_timing::free_after) {
        return std::nullopt;
    }
    return "failed on node " + lease.holder + ", which Shim " + lease.shim +
           " does not select (spec.nodeSelector): that halts nothing";
}

std::optional<std::chrono::steady_clock::time_point>
next_foreign_failure(const std::vector<SlotSeen>& slots, const std::map<std::string, json>& shims,
                     const NodeViews& nodes) {
    std::optional<std::chrono::steady_clock::time_point> next;
    for (const SlotSeen& slot : slots) {
        const auto shim = shims.find(slot.lease.shim);
        if (slot.lease.failed.empty() || shim == shims.end() ||
            failure_counts(slot.lease, shim->second, nodes)) {
            continue;
        }
        const auto due = slot.seen + slot_timing::free_after;
        next = next ? std::min(*next, due) : due;
    }
    return next;
}

} // namespace shimkeeper::cluster::model
