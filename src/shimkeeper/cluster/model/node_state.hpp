// What a node says about its cluster shims, on its own Node object (CLUSTER.md, "Where per-node
// state lives"): the label `shim.containerd.x-k8s.io/<shim>=<handler>` while the shim is
// installed and containerd was proven healthy with it serving that handler (a RuntimeClass
// selects on the key and its handler as the value, so a node that still serves another handler
// of the same shim is never selected), and the annotation
// of the same key holding the node's state as JSON. Pure: the patch that takes a Node from what
// it carries to what it should carry; node_reporter.hpp sends it.
#pragma once

#include "shimkeeper/cluster/model/slot_grant.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::cluster::model {

inline constexpr std::string_view k_shim_key_prefix = "shim.containerd.x-k8s.io/";

// The label and annotation key of a shim on a Node: "shim.containerd.x-k8s.io/spin-v2".
std::string shim_node_key(std::string_view shim);

enum class ShimState { installing, installed, failed, removing, conflict };
const char* to_string(ShimState state);

struct NodeShimState {
    ShimState state = ShimState::installed;
    long generation = 0; // the Shim's metadata.generation this state is about
    std::string digest;  // the artifact in use ("sha256:..."), empty when none
    std::string reason;  // why failed, removing or in conflict
    std::string time;    // RFC 3339, when this state was first reported
    std::string handler; // installed: the handler containerd serves for it (the label's value)
    // installed: the runtime type containerd runs it as, the Shim's or the one this node derived
    // from its artifact's binary (the coordinator writes it into the Shim's status). `{}`: brace
    // initialisers that end at handler stay free of -Wmissing-field-initializers.
    std::string runtime_type{};

    // The label goes with `installed` only: pods never land on a node still installing or failed.
    bool labelled() const { return state == ShimState::installed && !handler.empty(); }
    // The same state apart from its time: rewriting only the time would be a write per reconcile.
    bool same_as(const NodeShimState& other) const;
};

nlohmann::json to_json(const NodeShimState& state);
// nullopt: not our JSON (hand-edited): it will be overwritten.
std::optional<NodeShimState> node_shim_state_of(const std::string& annotation);

// What the Node carries now under our prefix, by shim name.
// The string entries of an object's metadata.<field> ("labels", "annotations") whose keys start
// with `prefix`; an absent or malformed field and non-string values are left out.
std::map<std::string, std::string> metadata_strings(const nlohmann::json& object,
                                                    std::string_view field,
                                                    std::string_view prefix = {});

struct NodeShimKeys {
    std::map<std::string, std::string> labels;      // shim -> label value
    std::map<std::string, std::string> annotations; // shim -> annotation text
    std::string slot_requests;                      // the slot requests' text (slot_grant.hpp)
    std::map<std::string, std::string> holds{};     // shim -> the key of its slot entry
};
NodeShimKeys shim_keys_of(const nlohmann::json& node);

// The merge patch (metadata.labels / metadata.annotations, null deleting a key) that makes the
// Node carry exactly `wanted` for every shim in it, and nothing for shims in `forget`. Keys of
// other shims are not touched. A state whose only difference is its time is kept as it is. A
// shim forgotten loses its slot entry too (slot_hold.hpp: the last slot the node held for it,
// kept until then).
// `requests`, when given, replaces the slot requests (none: the key goes).
// nullopt: nothing to change (no request at all).
std::optional<nlohmann::json> node_patch(const NodeShimKeys& current,
                                         const std::map<std::string, NodeShimState>& wanted,
                                         const std::vector<std::string>& forget,
                                         const std::optional<SlotRequests>& requests = {});

} // namespace shimkeeper::cluster::model
