// The RuntimeClass (node.k8s.io/v1) a Shim gets, and what to do about the one that exists (pure).
//   name      spec.runtimeClass.name, default the Shim's name (ShimIdentity);
//   handler   the Shim's handler (spec.handler, default its name);
//   scheduling.nodeSelector {shim.containerd.x-k8s.io/<shim>: <handler>}: the label a node sets
//             only once the shim is installed and containerd healthy serving that handler, so
//             pods wait for such a node instead of failing on one that is still installing, or
//             that still serves the handler of an earlier generation (waiting for its rollout
//             slot, or halted): selected means serving RuntimeClass.handler, at every instant;
//             AND every label of the Shim's own spec.nodeSelector. A node writes its readiness
//             label itself (its credential may), so that label alone would let any node pull the
//             pods of any Shim onto itself; with the Shim's labels beside it, only a node the
//             Shim selects is ever selected. The Shim's nodeSelector is a plain map of labels
//             (the CRD allows nothing else), so it goes over as it is; without one (every node
//             but the control plane's), only the readiness label: a RuntimeClass's map cannot say
//             "not node-role.kubernetes.io/control-plane" (a control-plane node's credential
//             could label itself ready: a Shim kept off some nodes needs a nodeSelector).
//             The readiness key wins over the same key in the Shim's selector. A selector a
//             RuntimeClass cannot carry (a value that is not a string, a key or value that is not
//             a valid label) gets no RuntimeClass and says why (InvalidSpec);
//   overhead.podFixed, scheduling.tolerations   spec.runtimeClass's own, as written, and only
//             when given (overhead_tolerations.hpp); the overhead compared by amount, since the
//             API server keeps its own spelling of each quantity;
//   ours      label app.kubernetes.io/managed-by=shimkeeper AND annotation
//             containerd.x-k8s.io/shim=<shim>; an owner reference to the Shim, so a cluster's
//             garbage collector removes it even if the finalizer is forced off.
// A RuntimeClass with that name that is not ours (no label, or another Shim's) is never changed:
// the Shim gets RuntimeClassReady=False, reason Conflict. Ours is brought back in line: the
// handler is immutable in the API, so a changed handler means delete (at the version read) and
// create; anything else is one JSON patch at the version read. A Shim name or handler that the
// node accepts but a RuntimeClass cannot carry (the API wants a DNS label for the handler and a
// DNS subdomain for the name: no "_", no "." in a handler) gets no RuntimeClass and says why.
#pragma once

#include "shimkeeper/cluster/model/conditions.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace shimkeeper::cluster::model {

inline constexpr const char* k_managed_by_label = "app.kubernetes.io/managed-by";
inline constexpr const char* k_managed_by_value = "shimkeeper";
inline constexpr const char* k_shim_annotation = "containerd.x-k8s.io/shim";

nlohmann::json desired_runtime_class(const ShimIdentity& identity, const nlohmann::json& shim);

// Its scheduling.nodeSelector: the Shim's spec.nodeSelector (as it is) and the readiness label.
nlohmann::json runtime_class_node_selector(const ShimIdentity& identity,
                                           const nlohmann::json& shim);

// The Shim a RuntimeClass was created for, or "" when shimkeeper did not create it.
std::string runtime_class_owner(const nlohmann::json& runtime_class);

struct RuntimeClassPlan {
    enum class Action { create, keep, patch, replace, conflict, invalid };
    Action action = Action::keep;
    nlohmann::json operations; // patch: the JSON patch (applied at the read's resourceVersion)
    Condition condition;       // RuntimeClassReady once the action succeeded
};

// existing: the RuntimeClass of that name as last seen, or nullptr.
RuntimeClassPlan plan_runtime_class(const nlohmann::json* existing, const nlohmann::json& desired,
                                    const ShimIdentity& identity);

} // namespace shimkeeper::cluster::model
