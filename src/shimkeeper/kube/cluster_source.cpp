#include "shimkeeper/kube/cluster_source.hpp"

#include "shimkeeper/kube/client.hpp"
#include "shimkeeper/kube/resource.hpp"
#include "shimkeeper/kube/shim_object.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <unistd.h>

namespace shimkeeper::kube {

namespace {

using nlohmann::json;

std::map<std::string, std::string> labels_of(const json& object) {
    std::map<std::string, std::string> labels;
    const json& metadata = object.contains("metadata") ? object["metadata"] : json::object();
    if (auto found = metadata.find("labels"); found != metadata.end() && found->is_object()) {
        for (const auto& [key, value] : found->items()) {
            if (value.is_string()) {
                labels[key] = value.get<std::string>();
            }
        }
    }
    return labels;
}

} // namespace

std::string ClusterSource::node_name() const {
    if (m_settings.node_name) {
        return *m_settings.node_name;
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string name(host);
    std::ranges::transform(name, name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
}

util::Expected<spec::DesiredShims> ClusterSource::load() const {
    const std::string agent_file = m_settings.kubeconfig.value_or(*m_settings.node_kubeconfig);
    const std::string node_file = m_settings.node_kubeconfig.value_or(agent_file);
    const std::string node = node_name();

    Client node_client = TRY(Client::from_kubeconfig(node_file));
    auto node_object = node_client.get(nodes_resource(), "", node);
    if (!node_object) {
        return std::unexpected(std::move(node_object.error())
                                   .with_context("reading this node's Node " + node +
                                                 " (set [kube] node_name if it is not " + node +
                                                 ")"));
    }
    const auto labels = labels_of(*node_object);

    Client agent = TRY(Client::from_kubeconfig(agent_file));
    auto shims = agent.list(shims_resource(), "");
    if (!shims) {
        return std::unexpected(std::move(shims.error()).with_context("listing Shims"));
    }
    spec::DesiredShims out;
    for (const json& shim : shims->items) {
        const std::string name = shim["metadata"].value("name", std::string("?"));
        if (!selects_node(shim, labels)) {
            continue;
        }
        if (shim["metadata"].contains("deletionTimestamp")) {
            out.warnings.push_back("Shim/" + name + " is being deleted: uninstalling it here");
            continue;
        }
        // A selecting Shim that does not validate stops the whole load: leaving it out would
        // uninstall what an earlier, valid version of it installed. The node stays as it is.
        auto spec = TRY(shim_spec_of(shim, m_arch));
        out.origins.push_back(spec.location.to_string());
        out.shims.push_back(std::move(spec));
    }
    return out;
}

} // namespace shimkeeper::kube
