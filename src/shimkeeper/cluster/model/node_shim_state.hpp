// How a Node reports a shim (CLUSTER.md, "Where per-node state lives"): the label
// shim.containerd.x-k8s.io/<shim>=<handler> while the shim is installed and containerd was proven
// healthy serving that handler, and the annotation of the same key holding the node's state as JSON
// (node_state.hpp, which also reads it). The node writes them; the coordinator keeps Nodes and
// asks about a shim here. Pure.
#pragma once

#include "shimkeeper/cluster/model/node_state.hpp"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::cluster::model {

// A Node as the coordinator keeps it: its labels and only shimkeeper's annotations. A whole
// Node is kilobytes of status that the kubelet rewrites every few minutes, none of which
// matters here; comparing views tells a relevant change from a heartbeat.
struct NodeView {
    std::string name;
    std::map<std::string, std::string> labels;
    std::map<std::string, std::string> shim_annotations; // keys under k_shim_key_prefix

    static NodeView of(const nlohmann::json& node);
    bool operator==(const NodeView&) const = default;
};

using NodeViews = std::map<std::string, NodeView>; // by name

// The slot requests the node says it has (slot_grant.hpp); none when it says nothing.
SlotRequests slot_requests_on(const NodeView& node);

struct ShimReport {
    std::optional<std::string> label; // its value, when the key is there at all
    bool annotated = false;
    std::optional<ShimState> state; // none: no annotation, or not ours (node_state.hpp reads it)
    std::int64_t generation = 0;
    std::string reason;
    std::string runtime_type; // the runtime type the node runs the shim as, when it says

    // The node still has something of the shim: the label, or a state annotation.
    bool carries() const { return label.has_value() || annotated; }
    // Installed, healthy and labelled as serving `handler`, at exactly this generation.
    bool installed_at(std::int64_t shim_generation, std::string_view handler) const {
        return label == handler && state == ShimState::installed && generation == shim_generation;
    }
    bool failed_at(std::int64_t shim_generation) const {
        return state == ShimState::failed && generation == shim_generation;
    }
};

ShimReport shim_on_node(const NodeView& node, std::string_view shim);

} // namespace shimkeeper::cluster::model
