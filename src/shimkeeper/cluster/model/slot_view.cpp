#include "shimkeeper/cluster/model/slot_view.hpp"

#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"

#include <algorithm>

namespace shimkeeper::cluster::model {

using nlohmann::json;

bool stamp_holds(HoldClock& clock, const NodeView& node,
                 std::chrono::steady_clock::time_point now) {
    std::map<std::string, SlotHold> holds = slot_holds_in(node.shim_annotations);
    if (holds.empty()) {
        clock.erase(node.name);
        return false;
    }
    std::map<std::string, HoldSeen>& known = clock[node.name];
    std::erase_if(known, [&](const auto& entry) { return !holds.contains(entry.first); });
    bool settled = false;
    for (auto& [shim, hold] : holds) {
        auto found = known.find(shim);
        if (found == known.end() || found->second.hold != hold) {
            const bool was = found != known.end() && found->second.hold.grant == hold.grant &&
                             (found->second.hold.done || !found->second.hold.failed.empty());
            settled = settled || (!was && (hold.done || !hold.failed.empty()));
            known[shim] = HoldSeen{std::move(hold), now};
        }
    }
    return settled;
}

const HoldSeen* hold_of_grant(const HoldClock& clock, const SlotLease& lease) {
    const auto node = clock.find(lease.holder);
    if (node == clock.end()) {
        return nullptr;
    }
    const auto entry = node->second.find(lease.shim);
    if (entry == node->second.end() || entry->second.hold.grant != lease.grant) {
        return nullptr;
    }
    return &entry->second;
}

std::vector<SlotSeen> judged_slots(const std::vector<SlotSeen>& leases, const HoldClock& clock) {
    std::vector<SlotSeen> out = leases;
    for (SlotSeen& slot : out) {
        const HoldSeen* taken = hold_of_grant(clock, slot.lease);
        if (taken == nullptr) {
            continue;
        }
        slot.seen = std::max(slot.seen, taken->seen);
        slot.lease.committing = taken->hold.committing;
        if (taken->hold.done && slot.lease.failed.empty()) {
            slot.lease.holder.clear(); // released
        }
    }
    return out;
}

std::string failure_key(const std::string& node, const SlotHold& hold) {
    return node + "/" + hold.grant;
}

std::vector<SlotSeen> without_given_back(std::vector<SlotSeen> own, const json& node) {
    const std::map<std::string, SlotHold> entries =
        slot_holds_in(metadata_strings(node, "annotations", k_slot_hold_key_prefix));
    std::erase_if(own, [&](const SlotSeen& slot) {
        const auto entry = entries.find(slot.lease.shim);
        return entry != entries.end() && entry->second.grant == slot.lease.grant &&
               entry->second.done;
    });
    return own;
}

std::vector<FailureToRecord> failures_to_record(const std::vector<SlotSeen>& leases,
                                                const HoldClock& clock, const NodeViews& nodes,
                                                const std::map<std::string, json>& shims,
                                                const std::set<std::string>& recorded,
                                                const std::map<std::string, std::string>& granted,
                                                std::chrono::steady_clock::time_point now) {
    std::vector<FailureToRecord> out;
    for (const auto& [node, entries] : clock) {
        const auto view = nodes.find(node);
        for (const auto& [shim_name, seen] : entries) {
            const SlotHold& hold = seen.hold;
            const auto shim = shims.find(shim_name);
            if (hold.failed.empty() || view == nodes.end() ||
                recorded.contains(failure_key(node, hold)) || shim == shims.end() ||
                shim->second.value(json::json_pointer("/metadata/uid"), "") != hold.uid ||
                shim->second.value(json::json_pointer("/metadata/generation"), 0L) !=
                    hold.generation ||
                !selects_node(shim->second, view->second.labels)) {
                continue;
            }
            const auto stands_for = std::ranges::find_if(leases, [&](const SlotSeen& slot) {
                return slot.lease.grant == hold.grant && slot.lease.holder == node;
            });
            if (stands_for != leases.end() && !stands_for->lease.failed.empty()) {
                continue; // recorded
            }
            if (stands_for == leases.end()) {
                const auto had = granted.find(hold.grant);
                if (had == granted.end() || had->second != node) {
                    continue; // no grant of this term's: made up, or from before (logged)
                }
                if (now - seen.seen > slot_timing::free_after) {
                    continue; // recorded in an earlier term, and the operator deleted it
                }
            }
            out.push_back({node, hold, stands_for == leases.end() ? nullptr : &*stands_for});
        }
    }
    return out;
}

} // namespace shimkeeper::cluster::model
