#include "shimkeeper/cluster/model/slot_lease.hpp"

#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/reconcile/fault.hpp"
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

// A slot of an older generation than the target's at an index its slot count lacks: released,
// never carried into the target's generation.
bool beyond_new_count(const SlotLease& lease, const RolloutTarget& target) {
    return lease.generation != target.generation &&
           slot_index_of(lease.name) >= std::max(target.slots, 1);
}

} // namespace

std::chrono::seconds slot_reclaim_after(const SlotLease& lease) {
    // Half a lease: a deliberately broken coordinator, for tests of the tests only (fault.hpp).
    if (reconcile::fault_switch("slot-reclaim-early")) {
        return slot_timing::free_after / 2;
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
    const std::string committing = annotation(lease, k_slot_committing_key);
    long seconds = 0;
    auto [end, ec] =
        std::from_chars(committing.data(), committing.data() + committing.size(), seconds);
    if (ec == std::errc() && end == committing.data() + committing.size() && seconds > 0) {
        out.committing = std::chrono::seconds(seconds);
    }
    out.holder = lease.value(json::json_pointer("/spec/holderIdentity"), std::string());
    const json::json_pointer duration("/spec/leaseDurationSeconds");
    if (lease.contains(duration) && lease.at(duration).is_number_integer()) {
        out.duration = std::chrono::seconds(lease.at(duration).get<long>());
    }
    return out;
}

json slot_lease_for(const RolloutTarget& target, int index, const std::string& holder,
                    std::chrono::seconds duration, const std::string& now_micro,
                    const json* existing) {
    json lease = existing != nullptr ? *existing : json::object();
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
    annotations.erase(k_slot_failed_key);
    annotations.erase(k_slot_committing_key); // a slot taken again is not past anything yet
    json& labels = metadata["labels"];
    if (!labels.is_object()) {
        labels = json::object();
    }
    labels[k_slot_holder_label] = holder_label_value(holder); // the holder's watch selects it
    lease["spec"] = {{"holderIdentity", holder},
                     {"leaseDurationSeconds", duration.count()},
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
            lease.failed.empty() && index >= 0 && !beyond_new_count(lease, target)) {
            return SlotDecision{lease.generation == target.generation ? SlotDecision::Kind::hold
                                                                      : SlotDecision::Kind::take,
                                index,
                                &slot,
                                {}};
        }
    }
    return std::nullopt;
}

std::vector<const SlotSeen*> own_slots_beyond_count(const std::vector<SlotSeen>& slots,
                                                    const RolloutTarget& target,
                                                    const std::string& me) {
    std::vector<const SlotSeen*> out;
    for (const SlotSeen& slot : slots) {
        const SlotLease& lease = slot.lease;
        if (lease.shim == target.shim && lease.uid == target.uid && lease.holder == me &&
            lease.failed.empty() && beyond_new_count(lease, target)) {
            out.push_back(&slot);
        }
    }
    return out;
}

SlotDecision decide_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target,
                         const std::string& me, unsigned start) {
    SlotDecision out;
    if (const SlotSeen* failed = failed_slot(slots, target)) {
        out.kind = SlotDecision::Kind::halted;
        out.why =
            "the rollout of Shim/" + target.shim + " is halted: " + halt_message(failed->lease);
        return out;
    }
    // Ours from before (a restart after a crash, or a renewal this node is still doing): keep it.
    if (auto own = own_slot_decision(slots, target, me)) {
        return *own;
    }
    std::vector<std::string> holders;
    const int count = std::max(target.slots, 1);
    for (int k = 0; k < count; ++k) {
        const int index = static_cast<int>((start + static_cast<unsigned>(k)) % count);
        const std::string name = slot_lease_name(target.shim, index);
        const auto seen =
            std::ranges::find(slots, name, [](const SlotSeen& s) { return s.lease.name; });
        if (seen == slots.end()) {
            return {SlotDecision::Kind::take, index, nullptr, {}};
        }
        holders.push_back(seen->lease.holder.empty() ? "released" : seen->lease.holder);
    }
    out.kind = SlotDecision::Kind::wait;
    out.why = "waiting for a rollout slot of Shim/" + target.shim + " (" + std::to_string(count) +
              " busy:";
    for (const auto& holder : holders) {
        out.why += " " + holder;
    }
    out.why += "; a slot that expired or is stale is freed by the coordinator)";
    return out;
}

std::optional<std::string> slot_reclaim_reason(const SlotSeen& slot, const json* shim,
                                               std::chrono::steady_clock::time_point now) {
    const SlotLease& lease = slot.lease;
    const bool expired_here = now - slot.seen > slot_reclaim_after(lease);
    const bool live = lease.failed.empty() && !lease.holder.empty() && !expired_here;
    const std::string uid =
        shim != nullptr ? shim->value(json::json_pointer("/metadata/uid"), std::string()) : "";
    if (shim == nullptr || uid != lease.uid) {
        // A live slot is never deleted here: this view may simply not have the new Shim yet.
        return live ? std::nullopt : std::optional<std::string>("Shim " + lease.shim + " is gone");
    }
    if (lease.holder.empty()) {
        return "released";
    }
    if (!lease.failed.empty()) {
        const long generation = shim->value(json::json_pointer("/metadata/generation"), 0L);
        if (lease.generation != generation) {
            return "failed at generation " + std::to_string(lease.generation) +
                   ", the Shim is at " + std::to_string(generation);
        }
        return std::nullopt; // the halt stands until a new generation or an operator's delete
    }
    if (expired_here) {
        const std::string past =
            lease.committing.count() > 0
                ? " (a lease, and the " + std::to_string(lease.committing.count()) +
                      " s it said its transaction may take past its point of no return)"
                : "";
        return "holder " + lease.holder + " did not renew it within " +
               std::to_string(slot_reclaim_after(lease).count()) + " s" + past;
    }
    return std::nullopt;
}

std::optional<std::chrono::steady_clock::time_point>
next_slot_expiry(const std::vector<SlotSeen>& slots) {
    std::optional<std::chrono::steady_clock::time_point> next;
    for (const SlotSeen& slot : slots) {
        if (!slot.lease.holder.empty() && slot.lease.failed.empty()) {
            const auto expiry = slot.seen + slot_reclaim_after(slot.lease);
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
