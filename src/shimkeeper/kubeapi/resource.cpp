#include "shimkeeper/kubeapi/resource.hpp"

#include <cstdio>

namespace shimkeeper::kubeapi {

Resource nodes_resource() {
    return {"", "v1", "nodes", Scope::cluster};
}
Resource leases_resource() {
    return {"coordination.k8s.io", "v1", "leases", Scope::namespaced};
}
Resource events_resource() {
    return {"events.k8s.io", "v1", "events", Scope::namespaced};
}
Resource core_events_resource() {
    return {"", "v1", "events", Scope::namespaced};
}
Resource config_maps_resource() {
    return {"", "v1", "configmaps", Scope::namespaced};
}
Resource runtime_classes_resource() {
    return {"node.k8s.io", "v1", "runtimeclasses", Scope::cluster};
}

std::string percent_encode(std::string_view text) {
    std::string out;
    for (unsigned char c : text) {
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            out.push_back(static_cast<char>(c));
        } else {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", c);
            out += hex;
        }
    }
    return out;
}

std::string to_query(const Query& query) {
    std::string out;
    for (const auto& [key, value] : query) {
        out += out.empty() ? '?' : '&';
        out += percent_encode(key) + "=" + percent_encode(value);
    }
    return out;
}

util::Expected<std::string> collection_path(const Resource& resource, std::string_view ns) {
    if (resource.plural.empty() || resource.version.empty()) {
        return util::fail(util::ErrorCode::internal, "a resource needs a version and a plural");
    }
    if (resource.scope == Scope::cluster && !ns.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          resource.plural + " are cluster-scoped: no namespace (got \"" +
                              std::string(ns) + "\")");
    }
    std::string path = resource.group.empty() ? "/api/" + resource.version
                                              : "/apis/" + resource.group + "/" + resource.version;
    if (!ns.empty()) {
        path += "/namespaces/" + percent_encode(ns);
    }
    return path + "/" + resource.plural;
}

util::Expected<std::string> object_path(const Resource& resource, std::string_view ns,
                                        std::string_view name, std::string_view subresource) {
    if (name.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "an object of " + resource.plural + " needs a name");
    }
    if (resource.scope == Scope::namespaced && ns.empty()) {
        return util::fail(util::ErrorCode::invalid_input, resource.plural + " are namespaced: \"" +
                                                              std::string(name) +
                                                              "\" needs a namespace");
    }
    std::string path = TRY(collection_path(resource, ns)) + "/" + percent_encode(name);
    if (!subresource.empty()) {
        path += "/" + std::string(subresource);
    }
    return path;
}

} // namespace shimkeeper::kubeapi
