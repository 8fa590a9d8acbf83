#include "shimkeeper/cluster/model/slot_lease.hpp"

#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <algorithm>
#include <charconv>

namespace shimkeeper::cluster::model {

namespace {

using nlohmann::json;

std::string annotation(const json& lease, const char* key) {
    const json::json_pointer where("/metadata/annotations");
    if (!lease.contains(where) || !lease.at(where).is_object()) {
        return {};
    }
    const json& annotations = lease.at(where);
    auto found = annotations.find(key);
    return found != annotations.end() && found->is_string() ? found->get<std::string>()
                                                            : std::string();
}

} // namespace

std::chrono::milliseconds slot_reclaim_after(const SlotLease& lease, SlotReclaimWait wait) {
    if (wait == SlotReclaimWait::half_lease) {
        return slot_timing::free_after / 2;
    }
    if (!lease.revoked.empty()) {
        return slot_timing::revoked_for;
    }
    return slot_timing::free_after + std::min(lease.committing, k_max_commit_allowance);
}

int slot_index_of(const std::string& name) {
    const auto at = name.rfind("-slot-");
    if (at == std::string::npos) {
        return -1;
    }
    int index = -1;
    const char* first = name.data() + at + 6;
    const char* last = name.data() + name.size();
    auto [ptr, ec] = std::from_chars(first, last, index);
    return ec == std::errc() && ptr == last && first != last ? index : -1;
}

std::string slot_lease_name(std::string_view shim, int index) {
    const std::string suffix = "-slot-" + std::to_string(index);
    constexpr std::size_t k_max_name = 253;
    if (shim.size() + suffix.size() <= k_max_name) {
        return std::string(shim) + suffix;
    }
    // Two long names sharing a prefix still get different Leases.
    return std::string(shim.substr(0, 200)) + "-" + util::sha256_hex(shim).substr(0, 16) + suffix;
}

SlotLease slot_lease_of(const json& lease) {
    SlotLease out;
    out.object = lease;
    out.name = kubeapi::name_of(lease);
    out.namespace_name = lease.value(json::json_pointer("/metadata/namespace"), std::string());
    out.resource_version =
        lease.value(json::json_pointer("/metadata/resourceVersion"), std::string());
    out.shim = annotation(lease, k_slot_shim_key);
    out.uid = annotation(lease, k_slot_uid_key);
    const std::string generation = annotation(lease, k_slot_generation_key);
    std::from_chars(generation.data(), generation.data() + generation.size(), out.generation);
    out.failed = annotation(lease, k_slot_failed_key);
    out.revoked = annotation(lease, k_slot_revoked_key);
    out.revoked_over = annotation(lease, k_slot_revoked_over_key);
    out.grant = annotation(lease, k_slot_grant_key);
    if (out.grant.empty()) {
        out.grant = lease.value(json::json_pointer("/metadata/uid"), std::string());
    }
    out.holder = lease.value(json::json_pointer("/spec/holderIdentity"), std::string());
    return out;
}

json slot_lease_for(const RolloutTarget& target, int index, const std::string& holder,
                    const std::string& now_micro) {
    json lease = json::object();
    lease["apiVersion"] = "coordination.k8s.io/v1";
    lease["kind"] = "Lease";
    json& metadata = lease["metadata"];
    metadata["name"] = slot_lease_name(target.shim, index);
    json& annotations = metadata["annotations"];
    if (!annotations.is_object()) {
        annotations = json::object();
    }
    annotations[k_slot_shim_key] = target.shim;
    annotations[k_slot_uid_key] = target.uid;
    annotations[k_slot_generation_key] = std::to_string(target.generation);
    json& labels = metadata["labels"];
    if (!labels.is_object()) {
        labels = json::object();
    }
    labels[k_slot_holder_label] = holder_label_value(holder); // the holder's watch selects it
    lease["spec"] = {{"holderIdentity", holder},
                     {"leaseDurationSeconds", slot_timing::lease.count()},
                     {"acquireTime", now_micro},
                     {"renewTime", now_micro}};
    return lease;
}

const SlotSeen* failed_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target) {
    for (const SlotSeen& slot : slots) {
        const SlotLease& lease = slot.lease;
        if (lease.shim == target.shim && lease.uid == target.uid &&
            lease.generation == target.generation && !lease.failed.empty()) {
            return &slot;
        }
    }
    return nullptr;
}

std::optional<SlotDecision> own_slot_decision(const std::vector<SlotSeen>& slots,
                                              const RolloutTarget& target, const std::string& me) {
    for (const SlotSeen& slot : slots) {
        const SlotLease& lease = slot.lease;
        const int index = slot_index_of(lease.name);
        if (lease.shim == target.shim && lease.uid == target.uid && lease.holder == me &&
            lease.generation == target.generation && lease.failed.empty() &&
            lease.revoked.empty() && index >= 0) {
            return SlotDecision{SlotDecision::Kind::hold, index, &slot, {}};
        }
    }
    return std::nullopt;
}

std::vector<const SlotSeen*> own_stale_grants(const std::vector<SlotSeen>& slots,
                                              const RolloutTarget& target, const std::string& me) {
    std::vector<const SlotSeen*> out;
    for (const SlotSeen& slot : slots) {
        const SlotLease& lease = slot.lease;
        if (lease.shim == target.shim && lease.uid == target.uid && lease.holder == me &&
            lease.failed.empty() && lease.generation != target.generation) {
            out.push_back(&slot);
        }
    }
    return out;
}

std::optional<SlotFree> slot_reclaim_reason(const SlotSeen& slot, const json* shim,
                                            std::chrono::steady_clock::time_point now,
                                            SlotReclaimWait wait) {
    const SlotLease& lease = slot.lease;
    const auto after = slot_reclaim_after(lease, wait);
    const bool due_here = now - slot.seen > after;
    const auto seconds = [](std::chrono::milliseconds span) {
        return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(span).count());
    };
    const std::string uid =
        shim != nullptr ? shim->value(json::json_pointer("/metadata/uid"), std::string()) : "";
    // A slot whose holder may still be working is never deleted here (the view may simply not
    // have a new Shim yet): it goes the way of every live slot, revoked first.
    if ((shim == nullptr || uid != lease.uid) && (!lease.failed.empty() || lease.holder.empty())) {
        return SlotFree{"Shim " + lease.shim + " is gone", SlotFree::Action::delete_now};
    }
    if (lease.holder.empty()) {
        return SlotFree{"released", SlotFree::Action::delete_now};
    }
    if (!lease.failed.empty() && shim != nullptr) {
        const long generation = shim->value(json::json_pointer("/metadata/generation"), 0L);
        if (lease.generation != generation) {
            return SlotFree{"failed at generation " + std::to_string(lease.generation) +
                                ", the Shim is at " + std::to_string(generation),
                            SlotFree::Action::delete_now};
        }
        return std::nullopt; // the halt stands until a new generation or an operator's delete
    }
    if (!due_here) {
        return std::nullopt;
    }
    if (!lease.revoked.empty()) {
        return SlotFree{"revoked " + seconds(after) + " s ago (" + lease.revoked + ")",
                        SlotFree::Action::delete_unless_renewed};
    }
    const std::string past =
        lease.committing.count() > 0
            ? " (a lease, and the " + std::to_string(lease.committing.count()) +
                  " s it said its transaction may take past its point of no return)"
            : "";
    return SlotFree{"holder " + lease.holder + " did not renew it within " + seconds(after) + " s" +
                        past,
                    SlotFree::Action::revoke};
}

std::optional<std::chrono::steady_clock::time_point>
next_slot_expiry(const std::vector<SlotSeen>& slots, SlotReclaimWait wait) {
    std::optional<std::chrono::steady_clock::time_point> next;
    for (const SlotSeen& slot : slots) {
        if (!slot.lease.holder.empty() && slot.lease.failed.empty()) {
            const auto expiry = slot.seen + slot_reclaim_after(slot.lease, wait);
            next = next ? std::min(*next, expiry) : expiry;
        }
    }
    return next;
}

std::string halt_message(const SlotLease& failed) {
    const std::string ns = failed.namespace_name.empty() ? "" : "-n " + failed.namespace_name + " ";
    return "node " + failed.holder + " failed at generation " + std::to_string(failed.generation) +
           ": " + failed.failed +
           ". No other node starts this generation. Resume with a new generation of the Shim (fix "
           "its spec), or retry this one with `kubectl " +
           ns + "delete lease " + failed.name + "`";
}

} // namespace shimkeeper::cluster::model
