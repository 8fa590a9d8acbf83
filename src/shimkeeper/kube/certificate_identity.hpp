// Which Node a kubelet client certificate speaks for. The Node authorizer knows a node by the
// certificate's subject CN `system:node:<name>`; the agent takes the same name when
// [kube] node_name is not set, so it never reports for a Node its credential may not touch.
#pragma once

#include "shimkeeper/kube/kubeconfig.hpp"

#include <optional>
#include <string>

namespace shimkeeper::kube {

// The <name> of the first certificate's CN `system:node:<name>` in the PEM (inline or file);
// nullopt when there is no readable certificate or its CN names no (valid) node name.
std::optional<std::string> node_name_of_certificate(const PemSource& certificate);

} // namespace shimkeeper::kube
