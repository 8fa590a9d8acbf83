// Whether a node could put itself into a Shim's pool (pure), said on the Shim as the condition
// PoolConfined.
//
// A node's own credential (the kubelet's, or a token bound to its Node) may set any label on its
// own Node except those NodeRestriction keeps from it: keys under kubernetes.io or k8s.io and
// their subdomains (but for a few the kubelet sets itself: kubernetes.io/hostname,
// kubernetes.io/arch, kubernetes.io/os, the instance-type and zone labels, and any key under
// [*.]kubelet.kubernetes.io/ or [*.]node.kubernetes.io/), and never a key under
// node-restriction.kubernetes.io/ or a subdomain of it, neither when the kubelet registers its
// Node nor later (checked in Kubernetes' plugin/pkg/admission/noderestriction). So a node can
// label itself into a Shim whose nodeSelector holds only keys it may set: it installs the shim,
// says it is ready, and the RuntimeClass (which selects on those labels and the readiness label)
// sends it the pods meant for the pool.
//
// The rule is kept simple on purpose: a nodeSelector with at least one key under
// node-restriction.kubernetes.io/ (or a subdomain) confines the pool; any other is reported as
// open, even one whose key a node cannot set for another reason (node-role.kubernetes.io/...):
// that prefix is the one Kubernetes documents for isolating nodes, and the only one no kubelet
// may ever set. A Shim without a nodeSelector goes to every node but the control plane's (whose
// node-role.kubernetes.io/control-plane label a node can neither set nor remove): no pool, True.
//
// Decision: a condition on the Shim's status, not a Warning Event. It states a fact of the spec
// for as long as the spec says it: `kubectl describe shim` and the status show it at any time,
// where an Event would be gone an hour later, and it is written only when the spec changes it
// (an Event would need its own memory of having been sent).
#pragma once

#include "shimkeeper/cluster/model/conditions.hpp"

#include <nlohmann/json.hpp>
#include <string_view>

namespace shimkeeper::cluster::model {

inline constexpr std::string_view k_node_restriction_domain = "node-restriction.kubernetes.io";

// Whether no node's own credential can set or remove the label `key` (its prefix is
// node-restriction.kubernetes.io or a subdomain of it).
bool node_cannot_set(std::string_view key);

// PoolConfined: True (reason NodeRestrictionLabel, or NoNodeSelector), or False (reason
// SelfAssignableLabels, the message naming the labels and how to confine the pool).
Condition pool_confinement(const nlohmann::json& shim);

} // namespace shimkeeper::cluster::model
