#include "shimkeeper/cluster/model/slot_grant.hpp"

#include "shimkeeper/cluster/model/conditions.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace shimkeeper::cluster::model {

using nlohmann::json;

std::string format_slot_requests(const SlotRequests& requests) {
    json out = json::object();
    for (const auto& [shim, request] : requests) {
        out[shim] = {
            {"uid", request.uid}, {"generation", request.generation}, {"since", request.since}};
        if (!request.refused.empty()) {
            out[shim]["refused"] = request.refused;
        }
    }
    return out.dump();
}

SlotRequests slot_requests_of(const std::string& annotation) {
    SlotRequests out;
    const json parsed = json::parse(annotation, nullptr, false);
    if (!parsed.is_object()) {
        return out;
    }
    for (const auto& [shim, value] : parsed.items()) {
        if (!value.is_object() || !value.value("uid", json()).is_string() ||
            !value.value("generation", json()).is_number_integer()) {
            continue;
        }
        const auto text = [&](const char* key) {
            return value.value(key, json()).is_string() ? value[key].get<std::string>()
                                                        : std::string();
        };
        SlotRequest request{value["uid"].get<std::string>(), value["generation"].get<long>(),
                            text("since"), text("refused")};
        if (!request.uid.empty() && request.generation > 0) {
            out[shim] = std::move(request);
        }
    }
    return out;
}

bool asks_anew(const SlotRequests& before, const SlotRequests& after) {
    return std::ranges::any_of(after, [&](const auto& entry) {
        const auto found = before.find(entry.first);
        return found == before.end() || found->second != entry.second;
    });
}

std::string holder_label_value(const std::string& node) {
    // Node names are DNS subdomains: lower-case alphanumerics, '-' and '.', alphanumeric at both
    // ends, which is a valid label value whenever it is short enough.
    if (!node.empty() && node.size() <= 63) {
        return node;
    }
    return "h-" + util::sha256_hex(node).substr(0, 40);
}

std::vector<std::string> gone_grants(const Grants& granted, const std::vector<SlotSeen>& slots,
                                     const std::set<std::string>& pending) {
    std::vector<std::string> out;
    for (const auto& [name, grant] : granted) {
        if (pending.contains(name)) {
            continue;
        }
        const bool held = std::ranges::any_of(slots, [&](const SlotSeen& slot) {
            return slot.lease.name == name && slot.lease.holder == grant.node;
        });
        if (!held) {
            out.push_back(name);
        }
    }
    return out;
}

std::vector<SlotGrant> plan_slot_grants(const std::vector<GrantTarget>& targets,
                                        const std::vector<SlotSeen>& slots,
                                        const std::map<std::string, SlotRequests>& requests,
                                        const std::vector<SlotGrant>& pending,
                                        const std::vector<Declined>& declined) {
    std::vector<SlotGrant> out;
    for (const GrantTarget& grant_target : targets) {
        const RolloutTarget& target = grant_target.target;
        if (grant_target.halted) {
            continue;
        }
        std::set<std::string> taken_names;
        std::set<std::string> holding; // nodes with a slot (or a pending grant) of this Shim
        for (const SlotSeen& slot : slots) {
            taken_names.insert(slot.lease.name);
            if (slot.lease.shim == target.shim && !slot.lease.holder.empty()) {
                holding.insert(slot.lease.holder);
            }
        }
        for (const SlotGrant& grant : pending) {
            taken_names.insert(slot_lease_name(grant.target.shim, grant.index));
            if (grant.target.shim == target.shim) {
                holding.insert(grant.node);
            }
        }
        std::vector<int> free;
        for (int index = 0; index < std::max(target.slots, 1); ++index) {
            if (!taken_names.contains(slot_lease_name(target.shim, index))) {
                free.push_back(index);
            }
        }
        auto next = free.begin();
        for (const auto& [node, asked] : requests) { // a std::map: in name order
            if (next == free.end()) {
                break;
            }
            const auto found = asked.find(target.shim);
            // A node that says the API server refuses it the watch of its grants could not take
            // one: it is granted once the refusal is gone from its request.
            if (found == asked.end() || !found->second.is_for(target) || holding.contains(node) ||
                !found->second.refused.empty() ||
                std::ranges::find(declined, Declined{node, target.shim, found->second}) !=
                    declined.end()) {
                continue;
            }
            out.push_back({target, *next++, node});
        }
    }
    return out;
}

json granted_slot_lease(const SlotGrant& grant, const std::string& now_micro) {
    return slot_lease_for(grant.target, grant.index, grant.node, now_micro);
}

json handed_over_slot_lease(const SlotGrant& grant, const SlotLease& previous,
                            const std::string& now_micro) {
    json lease = granted_slot_lease(grant, now_micro);
    const json& before = previous.object;
    const long transitions = before.value(json::json_pointer("/spec/leaseTransitions"), 0L) + 1;
    json& metadata = lease["metadata"];
    metadata["resourceVersion"] = previous.resource_version;
    metadata["annotations"][k_slot_grant_key] =
        before.value(json::json_pointer("/metadata/uid"), std::string()) + "-" +
        std::to_string(transitions);
    lease["spec"]["leaseTransitions"] = transitions;
    return lease;
}

SlotDecision decide_granted_slot(const std::vector<SlotSeen>& own, const RolloutTarget& target,
                                 const std::string& me, const std::string& halted) {
    if (auto held = own_slot_decision(own, target, me)) {
        return *held;
    }
    SlotDecision out;
    if (!halted.empty()) {
        out.kind = SlotDecision::Kind::halted;
        out.why = "the rollout of Shim/" + target.shim + " is halted: " + halted;
        return out;
    }
    out.kind = SlotDecision::Kind::wait;
    out.why = "waiting for the coordinator to grant a rollout slot of Shim/" + target.shim +
              " generation " + std::to_string(target.generation) + " (" +
              std::to_string(target.slots) + " at a time; requested on this Node)";
    return out;
}

std::string rollout_halted_message(const json& shim) {
    const json conditions = shim.value(json::json_pointer("/status/conditions"), json());
    const json* halted = find_condition(conditions, "RolloutHalted");
    if (halted == nullptr || halted->value("status", "") != "True") {
        return {};
    }
    return halted->value("message", "RolloutHalted");
}

} // namespace shimkeeper::cluster::model
