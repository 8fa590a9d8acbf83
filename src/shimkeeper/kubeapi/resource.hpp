// Which REST path a kind of object lives under. The API server's URL layout: the core group at
// /api/v1, every other group at /apis/<group>/<version>; namespaced resources below
// /namespaces/<ns>/, cluster-scoped ones directly. A namespaced collection without a namespace
// means "across all namespaces" (list and watch only).
#pragma once

#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shimkeeper::kubeapi {

enum class Scope { namespaced, cluster };

struct Resource {
    std::string group; // "" for the core group
    std::string version;
    std::string plural;
    Scope scope = Scope::cluster;

    std::string api_version() const { return group.empty() ? version : group + "/" + version; }
};

// The built-in kinds shimkeeper uses (its own Shim kind: cluster/model/shim_object.hpp).
Resource nodes_resource();
Resource leases_resource();
Resource events_resource(); // events.k8s.io/v1
// The same Events in core/v1's shape, whose list and watch take field selectors on
// involvedObject, reason and reportingComponent.
Resource core_events_resource();
Resource config_maps_resource();
Resource runtime_classes_resource(); // node.k8s.io/v1

// Query parameters in order; values are percent-encoded by to_query.
using Query = std::vector<std::pair<std::string, std::string>>;
std::string to_query(const Query& query); // "" or "?a=b&c=d"
std::string percent_encode(std::string_view text);

// /api/v1/namespaces/ns/configmaps, /apis/containerd.x-k8s.io/v1alpha1/shims, ...
// Refused: a namespace given for a cluster-scoped resource.
util::Expected<std::string> collection_path(const Resource& resource, std::string_view ns);

// The collection path plus /name[/subresource]; a namespaced object needs its namespace.
util::Expected<std::string> object_path(const Resource& resource, std::string_view ns,
                                        std::string_view name, std::string_view subresource = {});

} // namespace shimkeeper::kubeapi
