// Who a credential is, as the API server sees it (a SelfSubjectReview), and which Node, if any,
// it speaks for. A node agent acts only for the Node its credential is confined to: the node
// name is what the API server says, never a setting or a hostname, so the agent cannot report
// for a Node that its credential's admission rules would not let it touch.
//   - a kubelet's credential: user `system:node:<name>` in group `system:nodes` (the Node
//     authorizer and NodeRestriction key on it);
//   - a ServiceAccount token bound to a Node (`kubectl create token ... --bound-object-kind
//     Node`): the API server adds the extra `authentication.kubernetes.io/node-name`, which
//     deploy/'s admission policies compare with the object written.
#pragma once

#include "shimkeeper/kubeapi/client.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace shimkeeper::kubeapi {

inline constexpr const char* k_node_name_extra = "authentication.kubernetes.io/node-name";

struct SelfIdentity {
    std::string username;
    std::string node_name; // empty: the credential is not confined to a Node
    // "the kubelet identity system:node:<n>" or "a token of <sa> bound to Node <n>"; for messages.
    std::string how;
};

// Pure: a SelfSubjectReview's status.userInfo.
SelfIdentity self_identity_of(const nlohmann::json& user_info);

// One POST of a SelfSubjectReview (authentication.k8s.io/v1).
util::Expected<SelfIdentity> review_self(Client& client);

} // namespace shimkeeper::kubeapi
