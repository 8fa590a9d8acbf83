#include "shimkeeper/cluster/model/node_state.hpp"

#include "shimkeeper/cluster/model/slot_hold.hpp"

#include <array>
#include <utility>

namespace shimkeeper::cluster::model {

namespace {

using nlohmann::json;

constexpr std::array<std::pair<ShimState, const char*>, 5> k_states{{
    {ShimState::installing, "installing"},
    {ShimState::installed, "installed"},
    {ShimState::failed, "failed"},
    {ShimState::removing, "removing"},
    {ShimState::conflict, "conflict"},
}};

// Shimkeeper's keys of metadata.<field>, by shim name.
std::map<std::string, std::string> by_shim(const json& node, std::string_view field) {
    std::map<std::string, std::string> out;
    for (auto& [key, value] : metadata_strings(node, field, k_shim_key_prefix)) {
        // Not the slot requests nor a slot hold (slot_hold.hpp): those are no shim's state.
        if (key.size() > k_shim_key_prefix.size() && key != k_slot_requests_key &&
            !key.starts_with(k_slot_hold_key_prefix)) {
            out.emplace(key.substr(k_shim_key_prefix.size()), std::move(value));
        }
    }
    return out;
}

} // namespace

std::string shim_node_key(std::string_view shim) {
    return std::string(k_shim_key_prefix) + std::string(shim);
}

const char* to_string(ShimState state) {
    for (const auto& [value, name] : k_states) {
        if (value == state) {
            return name;
        }
    }
    return "unknown";
}

bool NodeShimState::same_as(const NodeShimState& other) const {
    return state == other.state && generation == other.generation && digest == other.digest &&
           reason == other.reason && runtime_type == other.runtime_type;
}

json to_json(const NodeShimState& state) {
    json out{{"state", to_string(state.state)}, {"generation", state.generation}};
    if (!state.digest.empty()) {
        out["digest"] = state.digest;
    }
    if (!state.reason.empty()) {
        out["reason"] = state.reason;
    }
    if (!state.runtime_type.empty()) {
        out["runtimeType"] = state.runtime_type;
    }
    out["time"] = state.time;
    return out;
}

std::optional<NodeShimState> node_shim_state_of(const std::string& annotation) {
    const json parsed = json::parse(annotation, nullptr, false);
    if (!parsed.is_object() || !parsed.contains("state") || !parsed["state"].is_string()) {
        return std::nullopt;
    }
    NodeShimState out;
    const std::string name = parsed["state"].get<std::string>();
    bool known = false;
    for (const auto& [value, text] : k_states) {
        if (name == text) {
            out.state = value;
            known = true;
        }
    }
    if (!known) {
        return std::nullopt;
    }
    const auto text_of = [&parsed](const char* key) {
        auto found = parsed.find(key);
        return found != parsed.end() && found->is_string() ? found->get<std::string>()
                                                           : std::string();
    };
    if (auto found = parsed.find("generation"); found != parsed.end() && found->is_number()) {
        out.generation = found->get<long>();
    }
    out.digest = text_of("digest");
    out.reason = text_of("reason");
    out.time = text_of("time");
    out.runtime_type = text_of("runtimeType");
    return out;
}

std::map<std::string, std::string> metadata_strings(const json& object, std::string_view field,
                                                    std::string_view prefix) {
    std::map<std::string, std::string> out;
    auto metadata = object.find("metadata");
    if (metadata == object.end() || !metadata->is_object()) {
        return out;
    }
    auto found = metadata->find(field);
    if (found == metadata->end() || !found->is_object()) {
        return out;
    }
    for (const auto& [key, value] : found->items()) {
        if (value.is_string() && key.starts_with(prefix)) {
            out.emplace(key, value.get<std::string>());
        }
    }
    return out;
}

NodeShimKeys shim_keys_of(const json& node) {
    const auto annotations = metadata_strings(node, "annotations", k_slot_requests_key);
    const auto requests = annotations.find(k_slot_requests_key);
    NodeShimKeys keys{by_shim(node, "labels"), by_shim(node, "annotations"),
                      requests != annotations.end() ? requests->second : std::string()};
    for (const auto& [shim, hold] :
         slot_holds_in(metadata_strings(node, "annotations", k_slot_hold_key_prefix))) {
        keys.holds[shim] = slot_hold_key(shim);
    }
    return keys;
}

std::optional<json> node_patch(const NodeShimKeys& current,
                               const std::map<std::string, NodeShimState>& wanted,
                               const std::vector<std::string>& forget,
                               const std::optional<SlotRequests>& requests) {
    json labels = json::object();
    json annotations = json::object();
    if (requests) {
        // None asked: the key goes, even when what it holds does not parse.
        const bool same = requests->empty() ? current.slot_requests.empty()
                                            : *requests == slot_requests_of(current.slot_requests);
        if (!same) {
            annotations[k_slot_requests_key] =
                requests->empty() ? json(nullptr) : json(format_slot_requests(*requests));
        }
    }
    for (const auto& [name, state] : wanted) {
        const bool has_label = current.labels.contains(name);
        if (state.labelled() && (!has_label || current.labels.at(name) != state.handler)) {
            labels[shim_node_key(name)] = state.handler;
        } else if (!state.labelled() && has_label) {
            labels[shim_node_key(name)] = nullptr;
        }
        std::optional<NodeShimState> have;
        if (auto found = current.annotations.find(name); found != current.annotations.end()) {
            have = node_shim_state_of(found->second);
        }
        if (!have || !have->same_as(state)) {
            annotations[shim_node_key(name)] = to_json(state).dump();
        }
    }
    for (const auto& name : forget) {
        if (wanted.contains(name)) {
            continue;
        }
        if (current.labels.contains(name)) {
            labels[shim_node_key(name)] = nullptr;
        }
        if (current.annotations.contains(name)) {
            annotations[shim_node_key(name)] = nullptr;
        }
        if (const auto hold = current.holds.find(name); hold != current.holds.end()) {
            annotations[hold->second] = nullptr;
        }
    }
    json metadata = json::object();
    if (!labels.empty()) {
        metadata["labels"] = std::move(labels);
    }
    if (!annotations.empty()) {
        metadata["annotations"] = std::move(annotations);
    }
    if (metadata.empty()) {
        return std::nullopt;
    }
    return json{{"metadata", std::move(metadata)}};
}

} // namespace shimkeeper::cluster::model
