// A Shim object (containerd.x-k8s.io/v1alpha1, cluster-scoped) as the node sees it: the ShimSpec
// it stands for, through the same validators as a TOML [[shim]] (CLUSTER.md: "the spec maps
// onto the same ShimSpec"), and whether it selects this node. Pure: the JSON comes from a list or
// a watch; nothing here talks to the API server.
//
// What the CRD's schema already refuses at admission is checked again here, because a node must
// never trust that the cluster runs the schema it ships (an older CRD, a hand-made object).
#pragma once

#include "shimkeeper/cluster/model/overhead_tolerations.hpp"
#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/util/error.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace shimkeeper::cluster::model {

// Where Shim objects live: containerd.x-k8s.io/v1alpha1 shims, cluster-scoped.
kubeapi::Resource shims_resource();

// The ShimSpec of a Shim, its fetch source chosen for `arch` (normalised, "amd64"). Its location
// names the object and its resourceVersion ("Shim/spin-v2@1234"). Errors name the object and
// the field: "Shim/spin-v2: spec.handler ...". ErrorCode::invalid_input.
util::Expected<spec::ShimSpec> shim_spec_of(const nlohmann::json& shim, const std::string& arch);

// Whether an origin (a spec's location, a stored record's origin) is the one shim_spec_of gives
// the Shim `name`: what tells a cluster shim from a file's on the node.
bool is_origin_of_shim(std::string_view origin, std::string_view name);

// What the cluster side needs of a Shim, checked as shim_spec_of checks it (the coordinator
// needs no fetch source, and must not refuse a Shim for lacking this node's architecture).
struct ShimIdentity {
    std::string name;                            // metadata.name
    std::string handler;                         // spec.handler, default the name
    std::string runtime_class;                   // spec.runtimeClass.name, default the name
    OverheadAndTolerations overhead_tolerations; // spec.runtimeClass's, none by default
};
util::Expected<ShimIdentity> shim_identity_of(const nlohmann::json& shim);

// What the Shim's status says of its spec in either spelling, for `kubectl get shims` and for
// users: runtimeClass (the RuntimeClass the coordinator manages), handler, and runtimeTypeFrom
// saying how the runtime type is decided, with runtimeType when the object alone says it (not
// when each node's artifact does). Empty for an object shim_identity_of refuses.
nlohmann::json spec_status_fields(const nlohmann::json& shim);

// spec.nodeSelector (label key -> value, all must match) against the Node's labels; without a
// selector, every node but those labelled node-role.kubernetes.io/control-plane.
bool selects_node(const nlohmann::json& shim, const std::map<std::string, std::string>& labels);

} // namespace shimkeeper::cluster::model
