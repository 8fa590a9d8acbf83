// What the coordinator learns from node agents' Events about refused writes to their own Nodes,
// and how a Shim's status names the node and the API server's message.
#include "shimkeeper/cluster/model/shim_rollup.hpp"
#include "shimkeeper/cluster/model/write_refusals.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_write_refusals {

using nlohmann::json;
using Clock = WriteRefusals::Clock;

// A node agent's Event in core/v1's shape, as the coordinator's watch reads it.
json event(const std::string& node, const std::string& reason, const std::string& action,
           const std::string& time, const std::string& message = "HTTP 403: denied") {
    return {{"involvedObject", {{"kind", "Shim"}, {"name", "spin"}}},
            {"reason", reason},
            {"action", action},
            {"message", message},
            {"eventTime", time},
            {"reportingComponent", k_agent_controller},
            {"reportingInstance", agent_instance(node)}};
}

constexpr const char* k_old = "2026-11-29T20:00:00.000000Z";
constexpr const char* k_t1 = "2026-11-29T22:00:01.000000Z";
constexpr const char* k_t2 = "2026-11-29T22:00:02.000000Z";

TEST(ClusterWriteRefusals, OnlyANodeAgentsEventAboutAShimCounts) {
    EXPECT_TRUE(write_event_of(event("a", k_write_refused, "HoldSlot", k_t1)));
    json other = event("a", k_write_refused, "HoldSlot", k_t1);
    other["reportingComponent"] = "shimkeeper.containerd.x-k8s.io/coordinator";
    EXPECT_FALSE(write_event_of(other));
    json about_node = event("a", k_write_refused, "HoldSlot", k_t1);
    about_node["involvedObject"]["kind"] = "Node";
    EXPECT_FALSE(write_event_of(about_node));
    json unnamed = event("a", k_write_refused, "HoldSlot", k_t1);
    unnamed["reportingInstance"] = "shimkeeper-";
    EXPECT_FALSE(write_event_of(unnamed));
    EXPECT_FALSE(write_event_of(event("a", "InstallFailed", "Install", k_t1)));
    const auto seen =
        write_event_of(event("node-b", k_write_refused, "HoldSlot", k_t1, "node node-b: why"));
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->node, "node-b");
    EXPECT_EQ(seen->shim, "spin");
    EXPECT_TRUE(seen->refused);
    EXPECT_EQ(seen->message, "why");
}

TEST(ClusterWriteRefusals, ARefusalHoldsUntilAcceptedOrForgotten) {
    WriteRefusals book;
    const auto now = Clock::now();
    book.apply(*write_event_of(event("a", k_write_refused, "HoldSlot", k_t1, "slot: 403")), now,
               k_old);
    book.apply(*write_event_of(event("a", k_write_refused, "ReportState", k_t1, "report: 403")),
               now, k_old);
    EXPECT_EQ(book.for_shim("spin", now),
              (std::map<std::string, std::string>{{"a", "slot: 403; report: 403"}}));
    EXPECT_TRUE(book.for_shim("other", now).empty());
    // The same request accepted again clears only that request.
    book.apply(*write_event_of(event("a", k_write_accepted, "HoldSlot", k_t2)), now, k_old);
    EXPECT_EQ(book.for_shim("spin", now),
              (std::map<std::string, std::string>{{"a", "report: 403"}}));
    // Nothing heard for k_refusal_kept: forgotten, and a pass is due then.
    ASSERT_EQ(book.next_expiry(now), now + k_refusal_kept);
    EXPECT_TRUE(book.for_shim("spin", now + k_refusal_kept).empty());
    EXPECT_FALSE(book.next_expiry(now + k_refusal_kept));
}

TEST(ClusterWriteRefusals, AListCountsTheLaterEventOfARequestAndSkipsOldOnes) {
    WriteRefusals book;
    const auto now = Clock::now();
    book.replace_with({event("a", k_write_accepted, "HoldSlot", k_t2),
                       event("a", k_write_refused, "HoldSlot", k_t1),
                       event("b", k_write_refused, "HoldSlot", k_old)},
                      now, "2026-11-29T21:50:00.000000Z");
    EXPECT_TRUE(book.for_shim("spin", now).empty());
    book.replace_with({event("a", k_write_accepted, "HoldSlot", k_t1),
                       event("a", k_write_refused, "HoldSlot", k_t2, "later")},
                      now, k_old);
    EXPECT_EQ(book.for_shim("spin", now), (std::map<std::string, std::string>{{"a", "later"}}));
}

TEST(ClusterWriteRefusals, TheShimsStatusNamesARefusedNodeOnItsWay) {
    const std::string key = "shim.containerd.x-k8s.io/spin";
    const json shim = {{"metadata", {{"name", "spin"}, {"generation", 1}}},
                       {"spec", {{"nodeSelector", {{"wasm", "true"}}}}}};
    NodeViews nodes;
    nodes.emplace("a", NodeView{"a", {{"wasm", "true"}}, {}});
    nodes.emplace("b", NodeView{"b",
                                {{"wasm", "true"}, {key, "spin"}},
                                {{key, json{{"state", "installed"}, {"generation", 1}}.dump()}}});
    const std::map<std::string, std::string> refusals = {{"a", "HTTP 403: no"},
                                                         {"b", "HTTP 403: late"}};
    const Rollup counted = rollup(shim, nodes, refusals);
    // b installed since: its old refusal is no reason any more.
    EXPECT_EQ(counted.refused, std::vector<std::string>{"a (HTTP 403: no)"});
    const auto conditions = node_conditions(shim, counted);
    ASSERT_EQ(conditions.size(), 2u);
    EXPECT_EQ(conditions[1].type, "Progressing");
    EXPECT_EQ(conditions[1].reason, "Refused");
    EXPECT_NE(conditions[1].message.find("a (HTTP 403: no)"), std::string::npos)
        << conditions[1].message;
    EXPECT_TRUE(rollup(shim, nodes).refused.empty());
}

} // namespace cluster_write_refusals
} // namespace
} // namespace shimkeeper::cluster::model
