// Slot grants, the pure parts: a node's request on its Node, the coordinator's choice
// of whom to grant which free slot, and a node's decision over the slots granted to it.
#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_slot_grants {

using nlohmann::json;
using Kind = SlotDecision::Kind;
using std::chrono::seconds;

const RolloutTarget k_target{"spin", "u-1", 4, 2};

SlotSeen slot(int index, const std::string& holder, const RolloutTarget& target = k_target,
              const std::string& failed = "") {
    json lease = slot_lease_for(target, index, holder, "2026-11-24T10:00:00.000000Z");
    lease["metadata"]["resourceVersion"] = std::to_string(100 + index);
    if (!failed.empty()) {
        lease["metadata"]["annotations"][k_slot_failed_key] = failed;
    }
    return {slot_lease_of(lease), std::chrono::steady_clock::now()};
}

SlotRequests asks(const RolloutTarget& target = k_target, const std::string& since = "t1") {
    return {{target.shim, SlotRequest{target.uid, target.generation, since}}};
}

std::vector<std::pair<std::string, int>> who_gets(const std::vector<SlotGrant>& grants) {
    std::vector<std::pair<std::string, int>> out;
    for (const auto& grant : grants) {
        out.emplace_back(grant.node, grant.index);
    }
    return out;
}

using Pairs = std::vector<std::pair<std::string, int>>;

TEST(ClusterSlotRequests, RoundTripAndMalformedEntriesAreLeftOut) {
    const SlotRequests requests = {{"spin", {"u-1", 4, "2026-11-27T04:00:00Z"}},
                                   {"kata", {"u-2", 1, "2026-11-27T04:01:00Z"}}};
    EXPECT_EQ(slot_requests_of(format_slot_requests(requests)), requests);
    const SlotRequests refused = {{"spin", {"u-1", 4, "t1", "HTTP 403: leases is forbidden"}}};
    EXPECT_EQ(slot_requests_of(format_slot_requests(refused)).at("spin").refused,
              "HTTP 403: leases is forbidden");
    EXPECT_EQ(format_slot_requests(requests).find("refused"), std::string::npos)
        << "said only while something is refused";
    EXPECT_TRUE(slot_requests_of("not json").empty());
    const SlotRequests kept = slot_requests_of(
        R"({"spin": {"uid": "u-1", "generation": 4}, "bad": "u-1/4", "zero": {"uid": "u", "generation": 0}})");
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept.at("spin"), (SlotRequest{"u-1", 4, ""}));
}

TEST(ClusterSlotRequests, ANewShimGenerationOrWaitAsksAnewAndADroppedOneDoesNot) {
    const SlotRequests spin = asks();
    EXPECT_TRUE(asks_anew({}, spin));
    EXPECT_FALSE(asks_anew(spin, spin)) << "the same request reported again";
    EXPECT_FALSE(asks_anew(spin, {})) << "a dropped request frees nothing to grant";
    EXPECT_TRUE(asks_anew(spin, asks(k_target, "t2"))) << "a daemon that waits again";
    SlotRequests remarked = spin;
    remarked.at("spin").refused = "HTTP 403: leases is forbidden";
    EXPECT_FALSE(asks_anew(spin, remarked)) << "a refusal is a remark on the same request";
    EXPECT_EQ(remarked.at("spin"), spin.at("spin")) << "so a request served stays served";
    EXPECT_TRUE(asks_anew(spin, asks(RolloutTarget{"spin", "u-1", 5, 2})));
    SlotRequests both = spin;
    both["kata"] = SlotRequest{"u-2", 1, "t1"};
    EXPECT_TRUE(asks_anew(spin, both));
    EXPECT_FALSE(asks_anew(both, spin));
}

TEST(ClusterSlotRequests, ANodeViewSaysItsRequestsOrNone) {
    json node;
    node["metadata"]["name"] = "n1";
    EXPECT_TRUE(slot_requests_on(NodeView::of(node)).empty());
    node["metadata"]["annotations"][k_slot_requests_key] = format_slot_requests(asks());
    EXPECT_EQ(slot_requests_on(NodeView::of(node)), asks());
}

TEST(ClusterSlotRequests, TheRequestKeyIsNoShimOfTheNodeAndAPatchSetsOrDropsIt) {
    json node;
    node["metadata"]["name"] = "n1";
    node["metadata"]["annotations"][k_slot_requests_key] = format_slot_requests(asks());
    node["metadata"]["annotations"]["shim.containerd.x-k8s.io/spin"] =
        R"({"state":"installed","generation":3})";
    const NodeShimKeys keys = shim_keys_of(node);
    EXPECT_EQ(keys.annotations.size(), 1u) << "slot_requests must not read as a Shim's state";
    EXPECT_EQ(slot_requests_of(keys.slot_requests), asks());

    EXPECT_FALSE(node_patch(keys, {}, {}, asks())) << "the same requests: no write";
    EXPECT_FALSE(node_patch(keys, {}, {}, std::nullopt)) << "nullopt leaves them alone";
    const auto dropped = node_patch(keys, {}, {}, SlotRequests{});
    ASSERT_TRUE(dropped);
    EXPECT_TRUE(dropped->at("metadata").at("annotations").at(k_slot_requests_key).is_null());
    const auto changed = node_patch(keys, {}, {}, asks(k_target, "t2"));
    ASSERT_TRUE(changed);
    EXPECT_EQ(slot_requests_of(changed->at("metadata").at("annotations").at(k_slot_requests_key)),
              asks(k_target, "t2"));
    EXPECT_FALSE(node_patch(keys, {}, {"slot_requests"}, std::nullopt))
        << "forgetting Shims never drops the requests";
}

TEST(ClusterSlotGrants, FreeSlotsGoToAskingNodesInNameOrderAndNoMoreThanTheCount) {
    const std::map<std::string, SlotRequests> requests = {
        {"n3", asks()}, {"n1", asks()}, {"n2", asks()}};
    EXPECT_EQ(who_gets(plan_slot_grants({{k_target, false}}, {}, requests, {}, {})),
              (Pairs{{"n1", 0}, {"n2", 1}}));
    // Slot 0 held by n1: only slot 1 is free, and n1 gets no second one.
    EXPECT_EQ(who_gets(plan_slot_grants({{k_target, false}}, {slot(0, "n1")}, requests, {}, {})),
              (Pairs{{"n2", 1}}));
    EXPECT_TRUE(
        plan_slot_grants({{k_target, false}}, {slot(0, "n1"), slot(1, "n9")}, requests, {}, {})
            .empty());
}

TEST(ClusterSlotGrants, AGrantNotYetSeenOnTheWatchIsNeitherGrantedAgainNorItsNode) {
    const std::map<std::string, SlotRequests> requests = {{"n1", asks()}, {"n2", asks()}};
    const std::vector<SlotGrant> pending = {{k_target, 0, "n1"}};
    EXPECT_EQ(who_gets(plan_slot_grants({{k_target, false}}, {}, requests, pending, {})),
              (Pairs{{"n2", 1}}));
}

TEST(ClusterSlotGrants, AHaltedGenerationAnotherGenerationOrADeclinedRequestGetsNothing) {
    const std::map<std::string, SlotRequests> requests = {{"n1", asks()}};
    EXPECT_TRUE(plan_slot_grants({{k_target, true}}, {}, requests, {}, {}).empty());
    RolloutTarget older = k_target;
    older.generation = 3;
    EXPECT_TRUE(plan_slot_grants({{k_target, false}}, {}, {{"n1", asks(older)}}, {}, {}).empty());
    const std::vector<Declined> declined = {{"n1", "spin", asks().at("spin")}};
    EXPECT_TRUE(plan_slot_grants({{k_target, false}}, {}, requests, {}, declined).empty());
    // The same node asking anew (its daemon started again) is granted.
    EXPECT_EQ(who_gets(plan_slot_grants({{k_target, false}}, {}, {{"n1", asks(k_target, "t2")}}, {},
                                        declined)),
              (Pairs{{"n1", 0}}));
    // A node that says it cannot watch its grants gets none until it no longer says so.
    SlotRequests refused = asks();
    refused.at("spin").refused = "watching its rollout slot Leases: HTTP 403";
    EXPECT_TRUE(plan_slot_grants({{k_target, false}}, {}, {{"n1", refused}}, {}, {}).empty());
}

TEST(ClusterSlotGrants, AGrantedRequestIsServedOnceItsSlotGoesWhateverBecameOfIt) {
    const Grants granted = {{"spin-slot-0", {"n1", "spin", asks().at("spin")}},
                            {"spin-slot-1", {"n2", "spin", asks().at("spin")}}};
    // n1's slot went (released or freed); n2's is still n2's.
    EXPECT_EQ(gone_grants(granted, {slot(1, "n2")}, {}), std::vector<std::string>{"spin-slot-0"});
    // Taken over by another node: gone for n1 too. Not yet on the watch: not gone.
    EXPECT_EQ(gone_grants(granted, {slot(0, "n3"), slot(1, "n2")}, {}),
              std::vector<std::string>{"spin-slot-0"});
    EXPECT_TRUE(gone_grants(granted, {slot(1, "n2")}, {"spin-slot-0"}).empty());
    // So n1 is not granted again on that request, and is once it asks anew.
    const std::vector<Declined> served = {granted.at("spin-slot-0")};
    EXPECT_EQ(who_gets(plan_slot_grants({{k_target, false}}, {slot(1, "n2")}, {{"n1", asks()}}, {},
                                        served)),
              Pairs{});
    EXPECT_EQ(who_gets(plan_slot_grants({{k_target, false}}, {slot(1, "n2")},
                                        {{"n1", asks(k_target, "t9")}}, {}, served)),
              (Pairs{{"n1", 0}}));
}

TEST(ClusterSlotGrants, AGrantIsHeldByTheNodeAndLabelledWithIt) {
    const json lease = granted_slot_lease({k_target, 1, "n1"}, "2026-11-27T04:00:00Z");
    EXPECT_EQ(lease["metadata"]["name"], "spin-slot-1");
    EXPECT_EQ(lease["spec"]["holderIdentity"], "n1");
    EXPECT_EQ(lease["metadata"]["labels"][k_slot_holder_label], "n1");
}

TEST(ClusterSlotGrants, AHandOverIsANewGrantReplacingTheVersionJudgedFree) {
    json stored = slot_lease_for(k_target, 1, "n1", "2026-11-27T04:00:00Z");
    stored["metadata"]["uid"] = "u-lease";
    stored["metadata"]["resourceVersion"] = "41";
    stored["metadata"]["annotations"][k_slot_failed_key] = "boom";
    const SlotLease before = slot_lease_of(stored);
    const json first = handed_over_slot_lease({k_target, 1, "n2"}, before, "2026-11-27T04:00:09Z");
    EXPECT_EQ(first["metadata"]["name"], "spin-slot-1");
    EXPECT_EQ(first["metadata"]["resourceVersion"], "41") << "a conflict if it changed since";
    EXPECT_EQ(first["spec"]["holderIdentity"], "n2");
    EXPECT_EQ(first["metadata"]["labels"][k_slot_holder_label], "n2");
    EXPECT_EQ(first["spec"]["acquireTime"], "2026-11-27T04:00:09Z");
    const SlotLease handed = slot_lease_of(first);
    EXPECT_EQ(handed.grant, "u-lease-1");
    EXPECT_NE(handed.grant, before.grant) << "n1's entry for the old grant never counts for it";
    EXPECT_TRUE(handed.failed.empty()) << "nothing of the old grant's remarks stays";

    json stored_again = first;
    stored_again["metadata"]["uid"] = "u-lease";
    stored_again["metadata"]["resourceVersion"] = "57";
    const json second = handed_over_slot_lease({k_target, 1, "n2"}, slot_lease_of(stored_again),
                                               "2026-11-27T04:00:19Z");
    EXPECT_EQ(slot_lease_of(second).grant, "u-lease-2")
        << "handed to the same node again: another grant all the same";
    EXPECT_EQ(second["spec"]["leaseTransitions"], 2);
}

TEST(ClusterSlotGrants, ALongNodeNameIsLabelledByItsHash) {
    EXPECT_EQ(holder_label_value("node-1.example"), "node-1.example");
    const std::string long_name(70, 'a');
    const std::string value = holder_label_value(long_name);
    EXPECT_EQ(value.size(), 42u);
    EXPECT_EQ(value.rfind("h-", 0), 0u);
    EXPECT_NE(value, holder_label_value(std::string(71, 'a')));
}

TEST(ClusterSlotGrants, ANodeHoldsItsGrantOrWaitsAndSaysWhy) {
    EXPECT_EQ(decide_granted_slot({slot(1, "n1")}, k_target, "n1", "").kind, Kind::hold);
    const SlotDecision waiting = decide_granted_slot({}, k_target, "n1", "");
    EXPECT_EQ(waiting.kind, Kind::wait);
    EXPECT_NE(waiting.why.find("grant a rollout slot of Shim/spin generation 4"), std::string::npos)
        << waiting.why;
    const SlotDecision halted = decide_granted_slot({}, k_target, "n1", "node n7 failed");
    EXPECT_EQ(halted.kind, Kind::halted);
    EXPECT_NE(halted.why.find("node n7 failed"), std::string::npos);
    EXPECT_EQ(decide_granted_slot({slot(1, "n1", k_target, "boom")}, k_target, "n1", "").kind,
              Kind::wait)
        << "a failed slot is not held again";
}

TEST(ClusterSlotGrants, TheHaltMessageComesFromTheShimsRolloutHaltedCondition) {
    json shim = {{"status",
                  {{"conditions", json::array({{{"type", "RolloutHalted"},
                                                {"status", "True"},
                                                {"message", "node n7 failed"}}})}}}};
    EXPECT_EQ(rollout_halted_message(shim), "node n7 failed");
    shim["status"]["conditions"][0]["status"] = "False";
    EXPECT_EQ(rollout_halted_message(shim), "");
}

} // namespace cluster_slot_grants
} // namespace
} // namespace shimkeeper::cluster::model
