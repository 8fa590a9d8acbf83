// Which Node a credential speaks for, from a SelfSubjectReview's userInfo: the kubelet's
// identity, a node-bound ServiceAccount token, or neither.
#include "shimkeeper/kubeapi/self_identity.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::kubeapi {
namespace {
namespace kubeapi_self_identity {

using nlohmann::json;

TEST(KubeSelfIdentity, AKubeletIdentityNamesItsNode) {
    const SelfIdentity who =
        self_identity_of({{"username", "system:node:worker-1"},
                          {"groups", {"system:nodes", "system:authenticated"}}});
    EXPECT_EQ(who.node_name, "worker-1");
    EXPECT_EQ(who.how, "the kubelet identity system:node:worker-1");
}

TEST(KubeSelfIdentity, ANodeBoundTokenNamesItsNodeThroughTheExtra) {
    const SelfIdentity who =
        self_identity_of({{"username", "system:serviceaccount:shimkeeper-system:shimkeeper-node"},
                          {"groups", {"system:serviceaccounts"}},
                          {"extra",
                           {{"authentication.kubernetes.io/node-name", {"worker-2"}},
                            {"authentication.kubernetes.io/node-uid", {"5a1e"}}}}});
    EXPECT_EQ(who.node_name, "worker-2");
    EXPECT_NE(who.how.find("bound to Node worker-2"), std::string::npos) << who.how;
}

TEST(KubeSelfIdentity, ACredentialNotConfinedToOneNodeNamesNone) {
    // An unbound token, an admin, a node-looking name outside system:nodes, several node names.
    for (const json& user :
         {json{{"username", "system:serviceaccount:shimkeeper-system:shimkeeper-node"}},
          json{{"username", "admin"}, {"groups", {"system:masters"}}},
          json{{"username", "system:node:worker-1"}, {"groups", {"system:authenticated"}}},
          json{{"username", "system:node:"}, {"groups", {"system:nodes"}}},
          json{{"username", "x"},
               {"extra", {{"authentication.kubernetes.io/node-name", {"a", "b"}}}}},
          json{{"username", "x"}, {"extra", {{"authentication.kubernetes.io/node-name", 7}}}},
          json(nullptr)}) {
        EXPECT_EQ(self_identity_of(user).node_name, "") << user.dump();
    }
}

} // namespace kubeapi_self_identity
} // namespace
} // namespace shimkeeper::kubeapi
