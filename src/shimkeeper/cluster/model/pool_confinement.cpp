#include "shimkeeper/cluster/model/pool_confinement.hpp"

#include <string>

namespace shimkeeper::cluster::model {

using nlohmann::json;

bool node_cannot_set(std::string_view key) {
    const auto slash = key.find('/');
    if (slash == std::string_view::npos) {
        return false;
    }
    const std::string_view prefix = key.substr(0, slash);
    const std::string subdomain = "." + std::string(k_node_restriction_domain);
    return prefix == k_node_restriction_domain || prefix.ends_with(subdomain);
}

Condition pool_confinement(const json& shim) {
    const json selector = shim.value(json::json_pointer("/spec/nodeSelector"), json());
    if (!selector.is_object() || selector.empty()) {
        return {"PoolConfined", ConditionStatus::true_, "NoNodeSelector",
                "no spec.nodeSelector: the Shim goes to every node but the control plane's, "
                "so there is no pool for a node to put itself into"};
    }
    std::string confining;
    std::string labels;
    for (const auto& [key, value] : selector.items()) {
        const std::string label = key + "=" + (value.is_string() ? value.get<std::string>() : "");
        labels += (labels.empty() ? "" : ", ") + label;
        if (node_cannot_set(key)) {
            confining += (confining.empty() ? "" : ", ") + label;
        }
    }
    if (!confining.empty()) {
        return {"PoolConfined", ConditionStatus::true_, "NodeRestrictionLabel",
                "spec.nodeSelector holds " + confining +
                    ", which no node can set on itself (NodeRestriction): only an admin puts "
                    "a node into this pool"};
    }
    return {"PoolConfined", ConditionStatus::false_, "SelfAssignableLabels",
            "spec.nodeSelector (" + labels + ") holds no key under " +
                std::string(k_node_restriction_domain) +
                "/, the prefix NodeRestriction keeps from every node's own credential: a node "
                "may label its own Node into this pool, install the shim and be sent its pods. To "
                "confine it, "
                "label the pool's nodes (as an admin) with a key under " +
                std::string(k_node_restriction_domain) +
                "/ and add that label to spec.nodeSelector"};
}

} // namespace shimkeeper::cluster::model
