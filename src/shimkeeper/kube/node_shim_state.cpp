#include "shimkeeper/kube/node_shim_state.hpp"

namespace shimkeeper::kube {

using nlohmann::json;

namespace {

std::map<std::string, std::string> string_map(const json& metadata, const char* field,
                                              std::string_view prefix) {
    std::map<std::string, std::string> out;
    auto found = metadata.find(field);
    if (found == metadata.end() || !found->is_object()) {
        return out;
    }
    for (const auto& [key, value] : found->items()) {
        if (value.is_string() && key.starts_with(prefix)) {
            out.emplace(key, value.get<std::string>());
        }
    }
    return out;
}

NodeShimState state_named(const std::string& text) {
    if (text == "installing") {
        return NodeShimState::installing;
    }
    if (text == "installed") {
        return NodeShimState::installed;
    }
    if (text == "failed") {
        return NodeShimState::failed;
    }
    if (text == "removing") {
        return NodeShimState::removing;
    }
    return NodeShimState::unknown;
}

} // namespace

std::string shim_node_key(std::string_view shim) {
    return std::string(k_shim_key_prefix) + std::string(shim);
}

NodeView NodeView::of(const json& node) {
    const json metadata = node.value("metadata", json::object());
    return {metadata.value("name", ""), string_map(metadata, "labels", ""),
            string_map(metadata, "annotations", k_shim_key_prefix)};
}

ShimOnNode shim_on_node(const NodeView& node, std::string_view shim) {
    const std::string key = shim_node_key(shim);
    ShimOnNode out;
    if (auto label = node.labels.find(key); label != node.labels.end()) {
        out.label = label->second;
    }
    auto annotation = node.shim_annotations.find(key);
    if (annotation == node.shim_annotations.end()) {
        return out;
    }
    out.annotated = true;
    // Written by another program (an agent of another version, a person): anything that is not
    // the expected shape is "unknown", which counts as not installed yet.
    json parsed = json::parse(annotation->second, nullptr, false);
    if (!parsed.is_object()) {
        out.reason = "the annotation " + key + " is not a JSON object";
        return out;
    }
    if (auto state = parsed.find("state"); state != parsed.end() && state->is_string()) {
        out.state = state_named(state->get<std::string>());
    }
    if (auto generation = parsed.find("generation");
        generation != parsed.end() && generation->is_number_integer()) {
        out.generation = generation->get<std::int64_t>();
    }
    if (auto reason = parsed.find("reason"); reason != parsed.end() && reason->is_string()) {
        out.reason = reason->get<std::string>();
    }
    return out;
}

} // namespace shimkeeper::kube
