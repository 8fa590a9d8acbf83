// Choosing this node's entry from an image index: os linux and the node's architecture
// (Kubernetes' spelling, as spec::node_architecture gives it). Entries without a platform and
// attestation entries (unknown/unknown) never match.
#pragma once

#include "shimkeeper/fetch/oci/manifest.hpp"

namespace shimkeeper::fetch::oci {

// The matching descriptor; an error listing the platforms the index offers otherwise.
util::Expected<Descriptor> select_platform(const Index& index, const std::string& architecture,
                                           const std::string& what);

} // namespace shimkeeper::fetch::oci
