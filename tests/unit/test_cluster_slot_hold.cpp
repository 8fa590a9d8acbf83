// A node's side of its rollout slots on its own Node (slot_hold.hpp), and the coordinator's view
// of the slots joined with those entries (slot_view.hpp): pure.
#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/slot_hold.hpp"
#include "shimkeeper/cluster/model/slot_view.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_slot_hold {

using nlohmann::json;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

const RolloutTarget k_target{"spin", "u-1", 4, 2};
const json k_shim = {{"metadata", {{"name", "spin"}, {"uid", "u-1"}, {"generation", 4}}},
                     {"spec", {{"nodeSelector", {{"pool", "b"}}}}}};

SlotHold hold_of(const std::string& grant, const std::string& renewed = "t1") {
    return SlotHold{"spin", "spin-slot-0", grant, "u-1", 4, renewed};
}

SlotSeen grant(int index, const std::string& holder, const std::string& uid,
               Clock::time_point seen) {
    json lease = slot_lease_for(k_target, index, holder, "2026-11-29T10:00:00.000000Z");
    lease["metadata"]["uid"] = uid;
    return {slot_lease_of(lease), seen};
}

NodeView node_with(const std::string& name, const std::vector<SlotHold>& holds,
                   std::map<std::string, std::string> labels = {{"pool", "b"}}) {
    NodeView view{name, std::move(labels), {}};
    for (const SlotHold& hold : holds) {
        view.shim_annotations[slot_hold_key(hold.shim)] = format_slot_hold(hold);
    }
    return view;
}

TEST(ClusterSlotHold, AnEntryRoundTripsAndAMalformedOneIsNone) {
    SlotHold full = hold_of("g-1");
    full.committing = seconds(698);
    full.failed = "containerd refused it";
    full.done = true;
    EXPECT_EQ(slot_hold_of(format_slot_hold(full)), full);
    EXPECT_EQ(slot_hold_of(format_slot_hold(hold_of("g-1"))), hold_of("g-1"));
    for (const std::string bad :
         {"", "not json", "[]", R"({"shim":"spin"})",
          R"({"shim":"spin","lease":"spin-slot-0","grant":"g","uid":"u","generation":"4"})",
          R"({"shim":"spin","lease":"spin-slot-0","grant":"","uid":"u","generation":4})"}) {
        EXPECT_EQ(slot_hold_of(bad), std::nullopt) << bad;
    }
}

TEST(ClusterSlotHold, EachShimHasAKeyOfItsOwnThatNoShimStateOrRequestsKeyCanBe) {
    EXPECT_EQ(slot_hold_key("spin"), "shim.containerd.x-k8s.io/held_spin");
    const std::string long_name(70, 'a');
    const std::string key = slot_hold_key(long_name);
    EXPECT_LE(key.size() - std::string("shim.containerd.x-k8s.io/").size(), 63U);
    EXPECT_NE(key, slot_hold_key(long_name + "b"));
    EXPECT_NE(slot_hold_key("requests"), k_slot_requests_key);
    // An entry under another Shim's key speaks for nobody.
    std::map<std::string, std::string> annotations{
        {slot_hold_key("spin"), format_slot_hold(hold_of("g-1"))},
        {slot_hold_key("other"), format_slot_hold(hold_of("g-2"))}};
    const auto holds = slot_holds_in(annotations);
    ASSERT_EQ(holds.size(), 1U);
    EXPECT_EQ(holds.at("spin").grant, "g-1");
    // The patch sets that one key only.
    const json patch = slot_hold_patch(hold_of("g-1"));
    EXPECT_EQ(patch["metadata"]["annotations"].size(), 1U);
    EXPECT_EQ(patch["metadata"]["annotations"][slot_hold_key("spin")],
              format_slot_hold(hold_of("g-1")));
}

TEST(ClusterSlotHold, AReleaseGoesWithTheReportInOneWriteThatKeepsEverythingTheReportSays) {
    SlotHold done = hold_of("g-1");
    done.done = true;
    const json report = {{"metadata",
                          {{"labels", {{"shim.containerd.x-k8s.io/spin", "spin"}}},
                           {"annotations",
                            {{"shim.containerd.x-k8s.io/spin", "{\"state\":\"installed\"}"},
                             {"shim.containerd.x-k8s.io/old", nullptr}}}}}};
    const auto both = with_slot_holds(report, {done});
    ASSERT_TRUE(both);
    EXPECT_EQ((*both)["metadata"]["labels"], report["metadata"]["labels"]);
    const json& annotations = (*both)["metadata"]["annotations"];
    EXPECT_EQ(annotations.size(), 3U);
    EXPECT_EQ(annotations["shim.containerd.x-k8s.io/spin"], "{\"state\":\"installed\"}");
    EXPECT_TRUE(annotations["shim.containerd.x-k8s.io/old"].is_null()) << "a removal stays one";
    EXPECT_EQ(slot_hold_of(annotations[slot_hold_key("spin")].get<std::string>()), done);
    // No report to carry them: the releases alone; nothing to release: the report as it was.
    EXPECT_EQ(with_slot_holds(std::nullopt, {done}), slot_hold_patch(done));
    EXPECT_EQ(with_slot_holds(report, {}), report);
    EXPECT_EQ(with_slot_holds(std::nullopt, {}), std::nullopt);
}

TEST(ClusterSlotView, AnEntryIsStampedWhenItsTextChangesAndSaysWhenASlotGoesOrFails) {
    HoldClock clock;
    const auto t0 = Clock::now();
    EXPECT_FALSE(stamp_holds(clock, node_with("n1", {hold_of("g-1", "t1")}), t0));
    EXPECT_EQ(clock["n1"]["spin"].seen, t0);
    // The same text again (a heartbeat of the kubelet's): the clock keeps running.
    EXPECT_FALSE(stamp_holds(clock, node_with("n1", {hold_of("g-1", "t1")}), t0 + seconds(5)));
    EXPECT_EQ(clock["n1"]["spin"].seen, t0);
    EXPECT_FALSE(stamp_holds(clock, node_with("n1", {hold_of("g-1", "t2")}), t0 + seconds(6)));
    EXPECT_EQ(clock["n1"]["spin"].seen, t0 + seconds(6));
    SlotHold done = hold_of("g-1", "t2");
    done.done = true;
    EXPECT_TRUE(stamp_holds(clock, node_with("n1", {done}), t0 + seconds(7)));
    EXPECT_FALSE(stamp_holds(clock, node_with("n1", {done}), t0 + seconds(8)));
    SlotHold failed = hold_of("g-2");
    failed.failed = "boom";
    EXPECT_TRUE(stamp_holds(clock, node_with("n1", {failed}), t0 + seconds(9)));
    EXPECT_FALSE(stamp_holds(clock, node_with("n1", {}), t0 + seconds(10)));
    EXPECT_FALSE(clock.contains("n1"));
}

TEST(ClusterSlotView, ATakenGrantIsAsFreshAsItsHoldersEntryAndADoneOneIsReleased) {
    const auto t0 = Clock::now() - seconds(100);
    HoldClock clock;
    SlotHold marked = hold_of("g-1");
    marked.committing = seconds(300);
    stamp_holds(clock, node_with("n1", {marked}), t0 + seconds(50));
    stamp_holds(clock, node_with("n2", {hold_of("g-old")}), t0 + seconds(50));
    const std::vector<SlotSeen> leases{grant(0, "n1", "g-1", t0), grant(1, "n2", "g-2", t0)};
    const auto judged = judged_slots(leases, clock);
    EXPECT_EQ(judged[0].seen, t0 + seconds(50)) << "renewed on n1's Node";
    EXPECT_EQ(judged[0].lease.committing, seconds(300));
    EXPECT_EQ(judged[0].lease.holder, "n1");
    EXPECT_EQ(judged[1].seen, t0) << "n2's entry names another grant: this one was never taken";
    EXPECT_EQ(judged[1].lease.committing, seconds(0));
    SlotHold done = marked;
    done.done = true;
    stamp_holds(clock, node_with("n1", {done}), t0 + seconds(60));
    EXPECT_TRUE(judged_slots(leases, clock)[0].lease.holder.empty()) << "released";
    EXPECT_EQ(slot_reclaim_reason(judged_slots(leases, clock)[0], &k_shim, Clock::now(),
                                  SlotReclaimWait::promised),
              (SlotFree{"released", SlotFree::Action::delete_now}));
}

TEST(ClusterSlotView, ANodeNeverSeesAsItsOwnAGrantItsNodeSaysItIsDoneWith) {
    const auto t0 = Clock::now();
    SlotHold done = hold_of("g-1");
    done.done = true;
    const auto node = [](const SlotHold& hold) {
        json object;
        object["metadata"]["name"] = "n1";
        object["metadata"]["annotations"][slot_hold_key(hold.shim)] = format_slot_hold(hold);
        return object;
    };
    const std::vector<SlotSeen> own{grant(0, "n1", "g-1", t0), grant(1, "n1", "g-2", t0)};
    const auto kept = without_given_back(own, node(done));
    ASSERT_EQ(kept.size(), 1u) << "g-1 was given back, by whichever process of n1";
    EXPECT_EQ(kept[0].lease.grant, "g-2");
    EXPECT_EQ(without_given_back(own, node(hold_of("g-1"))).size(), 2u)
        << "taken, not done: still its own";
    EXPECT_EQ(without_given_back(own, json::object()).size(), 2u)
        << "no entries: nothing given back";
}

TEST(ClusterSlotView, AFailureIsRecordedOnItsGrantOrOnALeaseOfItsOwnOnceAndOnlyWhereItCounts) {
    const auto now = Clock::now();
    SlotHold failed = hold_of("g-1");
    failed.failed = "containerd refused it";
    const NodeViews nodes{{"n1", node_with("n1", {failed})},
                          {"far", node_with("far", {failed}, {{"pool", "a"}})}};
    HoldClock clock;
    for (const auto& [name, view] : nodes) {
        stamp_holds(clock, view, now);
    }
    const std::map<std::string, json> shims{{"spin", k_shim}};
    std::vector<SlotSeen> leases{grant(0, "n1", "g-1", now)};
    std::set<std::string> recorded;
    const std::map<std::string, std::string> granted{{"g-1", "n1"}};
    auto todo = failures_to_record(leases, clock, nodes, shims, recorded, granted, now);
    ASSERT_EQ(todo.size(), 1U) << "not from a node the Shim does not select";
    EXPECT_EQ(todo[0].node, "n1");
    ASSERT_NE(todo[0].grant, nullptr);
    EXPECT_EQ(todo[0].grant->lease.name, "spin-slot-0");
    // The grant gone (revoked and freed while n1 was cut off): a Lease of its own.
    todo = failures_to_record({}, clock, nodes, shims, recorded, granted, now);
    ASSERT_EQ(todo.size(), 1U);
    EXPECT_EQ(todo[0].grant, nullptr);
    // Not for a grant this term never saw given to n1: a node cannot halt with a made-up one.
    EXPECT_TRUE(failures_to_record({}, clock, nodes, shims, recorded, {}, now).empty());
    EXPECT_TRUE(
        failures_to_record({}, clock, nodes, shims, recorded, {{"g-1", "n2"}}, now).empty());
    // Recorded (a failed Lease stands for that grant): nothing more to do.
    json marker = slot_lease_for(k_target, 1000, "n1", "T");
    marker["metadata"]["uid"] = "marker-uid";
    marker["metadata"]["annotations"][k_slot_failed_key] = "containerd refused it";
    marker["metadata"]["annotations"][k_slot_grant_key] = "g-1";
    EXPECT_TRUE(failures_to_record({{slot_lease_of(marker), now}}, clock, nodes, shims, recorded,
                                   granted, now)
                    .empty());
    // Once recorded, an operator's delete of that Lease (the retry) stays deleted: in this term
    // the coordinator knows it recorded it...
    recorded.insert(failure_key("n1", failed));
    EXPECT_TRUE(failures_to_record({}, clock, nodes, shims, recorded, granted, now).empty());
    // ...and a new term makes no Lease for an entry it has seen for longer than a lease (a grant
    // that still stands is marked all the same).
    const auto later = now + slot_timing::free_after + seconds(1);
    EXPECT_TRUE(failures_to_record({}, clock, nodes, shims, {}, granted, later).empty());
    EXPECT_EQ(failures_to_record(leases, clock, nodes, shims, {}, {}, later).size(), 1U);
    // A failure of another generation or Shim object halts nothing now.
    json newer = k_shim;
    newer["metadata"]["generation"] = 5;
    EXPECT_TRUE(failures_to_record({}, clock, nodes, {{"spin", newer}}, {}, granted, now).empty());
}

} // namespace cluster_slot_hold
} // namespace
} // namespace shimkeeper::cluster::model
