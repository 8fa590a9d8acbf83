// Whose word counts for a Shim's rollout: a node's slot request and its failure count only for
// the Shims that select it (or, for a request, that it still carries), however it annotates
// itself or whatever slot Lease it creates.
#include "shimkeeper/cluster/model/node_scope.hpp"
#include "shimkeeper/cluster/model/rollout_status.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_node_scope {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

json pool_b_shim() {
    return {{"metadata", {{"name", "hard"}, {"uid", "u-1"}, {"generation", 2}}},
            {"spec",
             {{"nodeSelector", {{"pool", "b"}}},
              {"rolloutStrategy", {{"type", "rolling"}, {"rolling", {{"maxUpdate", 1}}}}}}}};
}

const RolloutTarget k_hard{"hard", "u-1", 2, 1};

NodeView node(const std::string& name, std::map<std::string, std::string> labels,
              std::map<std::string, std::string> annotations = {}) {
    return {name, std::move(labels), std::move(annotations)};
}

std::string requests_text(const std::string& shim) {
    return format_slot_requests({{shim, {"u-1", 2, "2026-11-24T10:00:00.000000Z"}}});
}

SlotSeen failed_slot_of(const std::string& holder, Clock::time_point seen = Clock::now()) {
    json lease = slot_lease_for(k_hard, 0, holder, "2026-11-24T10:00:00.000000Z");
    lease["metadata"]["namespace"] = "shimkeeper-system";
    lease["metadata"]["annotations"][k_slot_failed_key] = "containerd did not start";
    return {slot_lease_of(lease), seen};
}

TEST(ClusterNodeScope, ARequestCountsOnlyForAShimThatSelectsTheNode) {
    NodeViews nodes;
    nodes["node-a"] =
        node("node-a", {{"pool", "a"}}, {{k_slot_requests_key, requests_text("hard")}});
    nodes["node-b"] =
        node("node-b", {{"pool", "b"}}, {{k_slot_requests_key, requests_text("hard")}});
    nodes["node-x"] =
        node("node-x", {{"pool", "b"}}, {{k_slot_requests_key, requests_text("gone")}});
    const std::map<std::string, json> shims{{"hard", pool_b_shim()}};
    const auto counted = counted_slot_requests(nodes, shims);
    ASSERT_EQ(counted.size(), 1U); // node-a is not in pool b; Shim gone is no Shim at all
    ASSERT_TRUE(counted.contains("node-b"));
    EXPECT_TRUE(counted.at("node-b").contains("hard"));

    // Granted from what counts: node-a's request gets no slot, node-b's does.
    const auto grants = plan_slot_grants({{k_hard, false}}, {}, counted, {}, {});
    ASSERT_EQ(grants.size(), 1U);
    EXPECT_EQ(grants[0].node, "node-b");
}

TEST(ClusterNodeScope, ANodeTheShimNoLongerSelectsMayStillAskToRemoveIt) {
    // Relabelled out of the pool, it still carries the shim (its label, its annotation): it
    // needs a slot to uninstall within the rollout's bound.
    NodeViews nodes;
    nodes["node-a"] = node("node-a", {{"pool", "a"}, {"shim.containerd.x-k8s.io/hard", "hard"}},
                           {{k_slot_requests_key, requests_text("hard")}});
    nodes["node-c"] = node("node-c", {{"pool", "a"}},
                           {{k_slot_requests_key, requests_text("hard")},
                            {"shim.containerd.x-k8s.io/hard", R"({"state":"installed"})"}});
    const auto counted = counted_slot_requests(nodes, {{"hard", pool_b_shim()}});
    EXPECT_TRUE(counted.contains("node-a"));
    EXPECT_TRUE(counted.contains("node-c"));
}

TEST(ClusterNodeScope, AFailureFromANodeTheShimDoesNotSelectHaltsNothing) {
    const json shim = pool_b_shim();
    NodeViews nodes;
    nodes["node-a"] = node("node-a", {{"pool", "a"}});
    nodes["node-b"] = node("node-b", {{"pool", "b"}});
    const std::vector<SlotSeen> foreign{failed_slot_of("node-a")};
    EXPECT_EQ(halting_slot(foreign, k_hard, shim, nodes), nullptr);
    Rollup rollup;
    rollup.generation = 2;
    rollup.counts.selected = 1;
    EXPECT_EQ(rollout_status(shim, rollup, foreign, nodes).halted.status, ConditionStatus::false_);

    const std::vector<SlotSeen> own{failed_slot_of("node-b")};
    EXPECT_EQ(halting_slot(own, k_hard, shim, nodes), &own[0]);
    const RolloutStatus halted = rollout_status(shim, rollup, own, nodes);
    EXPECT_EQ(halted.halted.status, ConditionStatus::true_);
    EXPECT_NE(halted.halted.message.find("node node-b failed"), std::string::npos);

    // A holder the coordinator does not know (deleted, or its Node not seen yet): kept.
    const std::vector<SlotSeen> unknown{failed_slot_of("node-z")};
    EXPECT_EQ(halting_slot(unknown, k_hard, shim, nodes), &unknown[0]);
}

TEST(ClusterNodeScope, AForeignFailedSlotIsFreedOnceItStoodForALease) {
    const json shim = pool_b_shim();
    NodeViews nodes;
    nodes["node-a"] = node("node-a", {{"pool", "a"}});
    nodes["node-b"] = node("node-b", {{"pool", "b"}});
    const auto now = Clock::now();
    // Not at once: the Node watch may still be behind a node that was just labelled into b.
    EXPECT_EQ(foreign_failure_reason(failed_slot_of("node-a", now - seconds(3)), shim, nodes, now),
              std::nullopt);
    const auto why =
        foreign_failure_reason(failed_slot_of("node-a", now - seconds(16)), shim, nodes, now);
    ASSERT_TRUE(why);
    EXPECT_EQ(*why, "failed on node node-a, which Shim hard does not select (spec.nodeSelector): "
                    "that halts nothing");
    // A failure that counts stays until a new generation or an operator's delete.
    EXPECT_EQ(
        foreign_failure_reason(failed_slot_of("node-b", now - seconds(600)), shim, nodes, now),
        std::nullopt);
    EXPECT_EQ(
        foreign_failure_reason(failed_slot_of("node-z", now - seconds(600)), shim, nodes, now),
        std::nullopt);

    // No event comes when it may go: the coordinator looks again then.
    const std::map<std::string, json> shims{{"hard", shim}};
    EXPECT_EQ(next_foreign_failure({failed_slot_of("node-b", now)}, shims, nodes), std::nullopt);
    EXPECT_EQ(next_foreign_failure({failed_slot_of("node-b", now), failed_slot_of("node-a", now)},
                                   shims, nodes),
              now + seconds(15));
}

} // namespace cluster_node_scope
} // namespace
} // namespace shimkeeper::cluster::model
