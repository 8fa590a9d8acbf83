// Cluster mode's desired-state source: the Shim objects that select this node. The node's own
// Node is read for its labels (with the node's identity when [kube] node_kubeconfig is set,
// else the agent's), every Shim with the agent's identity; each selecting Shim becomes a
// ShimSpec through shim_object.hpp. A Shim being deleted is left out (so the node uninstalls it);
// one that clashes with a file in shims.d/ yields to the file (spec::gather). A selecting Shim
// that does not validate, and an API server that does not answer, are errors: the caller then
// changes nothing on the node, rather than uninstalling what it cannot read.
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/sources.hpp"

#include <string>

namespace shimkeeper::kube {

class ClusterSource : public spec::DesiredSource {
public:
    ClusterSource(spec::KubeSettings settings, std::string arch)
        : m_settings(std::move(settings)), m_arch(std::move(arch)) {}

    util::Expected<spec::DesiredShims> load() const override;
    bool yields_on_conflict() const override { return true; }

    // [kube] node_name, else this host's name lowercased (what the kubelet registers by default).
    std::string node_name() const;

private:
    spec::KubeSettings m_settings;
    std::string m_arch;
};

} // namespace shimkeeper::kube
