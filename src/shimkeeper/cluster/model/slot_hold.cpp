#include "shimkeeper/cluster/model/slot_hold.hpp"

#include "shimkeeper/util/sha256.hpp"

namespace shimkeeper::cluster::model {

using nlohmann::json;

std::string slot_hold_key(std::string_view shim) {
    // An annotation key's name part holds at most 63 characters.
    constexpr std::size_t k_max_name = 63;
    constexpr std::size_t k_infix = 5; // "held_"
    if (shim.size() + k_infix <= k_max_name) {
        return std::string(k_slot_hold_key_prefix) + std::string(shim);
    }
    return std::string(k_slot_hold_key_prefix) + std::string(shim.substr(0, 25)) + "-" +
           util::sha256_hex(shim).substr(0, 32);
}

std::string format_slot_hold(const SlotHold& hold) {
    json out = {{"shim", hold.shim}, {"lease", hold.lease},           {"grant", hold.grant},
                {"uid", hold.uid},   {"generation", hold.generation}, {"renewed", hold.renewed}};
    if (hold.committing.count() > 0) {
        out["committing"] = hold.committing.count();
    }
    if (!hold.failed.empty()) {
        out["failed"] = hold.failed;
    }
    if (hold.done) {
        out["done"] = true;
    }
    return out.dump();
}

std::optional<SlotHold> slot_hold_of(const std::string& annotation) {
    const json parsed = json::parse(annotation, nullptr, false);
    if (!parsed.is_object()) {
        return std::nullopt;
    }
    const auto text = [&](const char* key) {
        const auto found = parsed.find(key);
        return found != parsed.end() && found->is_string() ? found->get<std::string>()
                                                           : std::string();
    };
    const auto flag = [&](const char* key) {
        const auto found = parsed.find(key);
        return found != parsed.end() && found->is_boolean() && found->get<bool>();
    };
    SlotHold hold{text("shim"), text("lease"), text("grant"), text("uid")};
    const auto generation = parsed.find("generation");
    if (generation == parsed.end() || !generation->is_number_integer()) {
        return std::nullopt;
    }
    hold.generation = generation->get<long>();
    hold.renewed = text("renewed");
    if (const auto committing = parsed.find("committing"); committing != parsed.end() &&
                                                           committing->is_number_integer() &&
                                                           committing->get<long>() > 0) {
        hold.committing = std::chrono::seconds(committing->get<long>());
    }
    hold.failed = text("failed");
    hold.done = flag("done");
    if (hold.shim.empty() || hold.lease.empty() || hold.grant.empty() || hold.uid.empty() ||
        hold.generation <= 0) {
        return std::nullopt;
    }
    return hold;
}

std::map<std::string, SlotHold>
slot_holds_in(const std::map<std::string, std::string>& annotations) {
    std::map<std::string, SlotHold> out;
    for (auto it = annotations.lower_bound(std::string(k_slot_hold_key_prefix));
         it != annotations.end() && it->first.starts_with(k_slot_hold_key_prefix); ++it) {
        auto hold = slot_hold_of(it->second);
        // The key must be the entry's own: a node cannot speak for one Shim under another's key.
        if (hold && slot_hold_key(hold->shim) == it->first) {
            out[hold->shim] = std::move(*hold);
        }
    }
    return out;
}

json slot_hold_patch(const SlotHold& hold) {
    return {{"metadata", {{"annotations", {{slot_hold_key(hold.shim), format_slot_hold(hold)}}}}}};
}

std::optional<json> with_slot_holds(std::optional<json> patch, const std::vector<SlotHold>& holds) {
    if (holds.empty()) {
        return patch;
    }
    json out = patch ? std::move(*patch) : json::object();
    for (const SlotHold& hold : holds) {
        out["metadata"]["annotations"][slot_hold_key(hold.shim)] = format_slot_hold(hold);
    }
    return out;
}

} // namespace shimkeeper::cluster::model
