// PoolConfined on a Shim: whether a node could label itself into the Shim's pool. Only a key
// under node-restriction.kubernetes.io/ (or a subdomain) is one no node's own credential can set.
#include "shimkeeper/cluster/model/pool_confinement.hpp"
#include "shimkeeper/cluster/model/shim_rollup.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_pool_confinement {

using nlohmann::json;

json shim_selecting(json selector) {
    json shim = {{"metadata", {{"name", "hard"}, {"generation", 1}}}, {"spec", json::object()}};
    if (!selector.is_null()) {
        shim["spec"]["nodeSelector"] = std::move(selector);
    }
    return shim;
}

TEST(ClusterPoolConfinement, OnlyNodeRestrictionKeysAreOnesANodeCannotSet) {
    EXPECT_TRUE(node_cannot_set("node-restriction.kubernetes.io/pool"));
    EXPECT_TRUE(node_cannot_set("example.node-restriction.kubernetes.io/pool"));
    EXPECT_FALSE(node_cannot_set("pool"));
    EXPECT_FALSE(node_cannot_set("example.org/pool"));
    EXPECT_FALSE(node_cannot_set("xnode-restriction.kubernetes.io/pool"));
    EXPECT_FALSE(node_cannot_set("kubernetes.io/hostname")); // the kubelet sets it itself
    EXPECT_FALSE(node_cannot_set("pool/node-restriction.kubernetes.io"));
}

TEST(ClusterPoolConfinement, ASelectorOfSelfAssignableLabelsIsReportedOpen) {
    const Condition open = pool_confinement(shim_selecting({{"pool", "b"}, {"zone", "x"}}));
    EXPECT_EQ(open.type, "PoolConfined");
    EXPECT_EQ(open.status, ConditionStatus::false_);
    EXPECT_EQ(open.reason, "SelfAssignableLabels");
    EXPECT_NE(open.message.find("spec.nodeSelector (pool=b, zone=x)"), std::string::npos)
        << open.message;
    EXPECT_NE(open.message.find("node-restriction.kubernetes.io/"), std::string::npos);
}

TEST(ClusterPoolConfinement, ANodeRestrictionLabelConfinesIt) {
    const Condition confined = pool_confinement(
        shim_selecting({{"pool", "b"}, {"node-restriction.kubernetes.io/pool", "b"}}));
    EXPECT_EQ(confined.status, ConditionStatus::true_);
    EXPECT_EQ(confined.reason, "NodeRestrictionLabel");
    EXPECT_NE(confined.message.find("node-restriction.kubernetes.io/pool=b"), std::string::npos);
}

TEST(ClusterPoolConfinement, NoSelectorIsNoPool) {
    EXPECT_EQ(pool_confinement(shim_selecting(nullptr)).reason, "NoNodeSelector");
    EXPECT_EQ(pool_confinement(shim_selecting(json::object())).status, ConditionStatus::true_);
}

TEST(ClusterPoolConfinement, TheShimsStatusCarriesIt) {
    const json shim = shim_selecting({{"pool", "b"}});
    const json status = desired_status(shim, rollup(shim, {}), std::nullopt, "T1");
    const json* condition = find_condition(status["conditions"], "PoolConfined");
    ASSERT_NE(condition, nullptr) << status.dump();
    EXPECT_EQ((*condition)["status"], "False");
    EXPECT_EQ((*condition)["reason"], "SelfAssignableLabels");
}

} // namespace cluster_pool_confinement
} // namespace
} // namespace shimkeeper::cluster::model
