#include "shimkeeper/cluster/model/node_shim_state.hpp"

#include "shimkeeper/kubeapi/object_meta.hpp"
namespace shimkeeper::cluster::model {

using nlohmann::json;

NodeView NodeView::of(const json& node) {
    return {kubeapi::name_of(node), metadata_strings(node, "labels"),
            metadata_strings(node, "annotations", k_shim_key_prefix)};
}

SlotRequests slot_requests_on(const NodeView& node) {
    const auto text = node.shim_annotations.find(k_slot_requests_key);
    return text == node.shim_annotations.end() ? SlotRequests{} : slot_requests_of(text->second);
}

ShimReport shim_on_node(const NodeView& node, std::string_view shim) {
    const std::string key = shim_node_key(shim);
    ShimReport out;
    if (auto label = node.labels.find(key); label != node.labels.end()) {
        out.label = label->second;
    }
    auto annotation = node.shim_annotations.find(key);
    if (annotation == node.shim_annotations.end()) {
        return out;
    }
    out.annotated = true;
    // Written by another program (an agent of another version, a person): anything that is not
    // the expected shape has no state, which counts as not installed yet.
    const auto said = node_shim_state_of(annotation->second);
    if (!said) {
        out.reason = "the annotation " + key + " is not shimkeeper's state JSON";
        return out;
    }
    out.state = said->state;
    out.generation = said->generation;
    out.reason = said->reason;
    out.runtime_type = said->runtime_type;
    return out;
}

} // namespace shimkeeper::cluster::model
