// Rollout slots, the pure parts: the strategy as a slot count, what a node decides over the slot
// Leases it has seen, the board the Lease watch feeds, and the coordinator's RolloutHalted.
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/cluster/model/rollout_status.hpp"
#include "shimkeeper/cluster/model/slot_board.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_lease.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_rollout_slots {

using nlohmann::json;
using Kind = SlotDecision::Kind;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

json shim_with(json strategy, json status = json::object()) {
    json shim = {{"metadata", {{"name", "spin"}, {"uid", "u-1"}, {"generation", 4}}},
                 {"spec", json::object()},
                 {"status", status}};
    if (!strategy.is_null()) {
        shim["spec"]["rolloutStrategy"] = strategy;
    }
    return shim;
}

const RolloutTarget k_target{"spin", "u-1", 4, 3};
const json k_shim_object = {{"metadata", {{"name", "spin"}, {"uid", "u-1"}, {"generation", 4}}}};

SlotSeen slot(int index, const std::string& holder, const RolloutTarget& target = k_target,
              const std::string& failed = "", Clock::time_point seen = Clock::now()) {
    json lease = slot_lease_for(target, index, holder, "2026-11-24T10:00:00.000000Z");
    lease["metadata"]["namespace"] = "shimkeeper-system";
    lease["metadata"]["resourceVersion"] = std::to_string(100 + index);
    if (!failed.empty()) {
        lease["metadata"]["annotations"][k_slot_failed_key] = failed;
    }
    return {slot_lease_of(lease), seen};
}

TEST(ClusterRolloutPolicy, NoStrategyOrRecreateChangesEveryNodeAtOnce) {
    EXPECT_FALSE(rollout_policy_of(shim_with(nullptr))->rolling);
    EXPECT_FALSE(rollout_policy_of(shim_with({{"type", "recreate"}}))->rolling);
}

TEST(ClusterRolloutPolicy, RollingDefaultsToOneNodeAndTakesACountOrAPercentage) {
    auto bare = rollout_policy_of(shim_with(json::object()));
    ASSERT_TRUE(bare);
    EXPECT_TRUE(bare->rolling);
    EXPECT_EQ(resolve_slots(*bare, 50), 1);
    auto count = rollout_policy_of(shim_with({{"rolling", {{"maxUpdate", 5}}}}));
    EXPECT_EQ(resolve_slots(*count, 2), 5);
    auto percent = rollout_policy_of(shim_with({{"rolling", {{"maxUpdate", "25%"}}}}));
    ASSERT_TRUE(percent);
    EXPECT_EQ(resolve_slots(*percent, 8), 2); // 25% of 8
    EXPECT_EQ(resolve_slots(*percent, 9), 3); // rounded up
    EXPECT_EQ(resolve_slots(*percent, 0), 1); // at least one
    EXPECT_EQ(resolve_slots(*percent, 1000), 250);
}

TEST(ClusterRolloutPolicy, BadStrategiesAreRefusedNamingTheField) {
    for (const json& bad :
         {json{{"type", "canary"}}, json{{"rolling", {{"maxUpdate", 0}}}},
          json{{"rolling", {{"maxUpdate", "0%"}}}}, json{{"rolling", {{"maxUpdate", "101%"}}}},
          json{{"rolling", {{"maxUpdate", "5"}}}}, json{{"rolling", {{"maxUpdate", "05%"}}}},
          json{{"type", "recreate"}, {"rolling", {{"maxUpdate", 1}}}}}) {
        auto policy = rollout_policy_of(shim_with(bad));
        ASSERT_FALSE(policy) << bad.dump();
        EXPECT_NE(policy.error().message().find("Shim/spin: spec.rolloutStrategy"),
                  std::string::npos)
            << policy.error().message();
    }
}

TEST(ClusterRolloutPolicy, ANodeReadsAPercentageFromTheCoordinatorsStatus) {
    auto percent = *rollout_policy_of(shim_with({{"rolling", {{"maxUpdate", "50%"}}}}));
    EXPECT_EQ(slots_for_node(percent, shim_with(nullptr)), std::nullopt);
    EXPECT_EQ(slots_for_node(percent, shim_with(nullptr, {{"slots", 4}})), std::nullopt)
        << "a count without the generation it was resolved for";
    EXPECT_EQ(
        slots_for_node(percent, shim_with(nullptr, {{"observedGeneration", 3}, {"slots", 4}})),
        std::nullopt)
        << "a count resolved for generation 3, the Shim is at 4";
    EXPECT_EQ(
        slots_for_node(percent, shim_with(nullptr, {{"observedGeneration", 4}, {"slots", 4}})), 4);
    auto count = *rollout_policy_of(shim_with({{"rolling", {{"maxUpdate", 3}}}}));
    EXPECT_EQ(slots_for_node(count, shim_with(nullptr)), 3);
}

using Action = SlotFree::Action;

SlotSeen revoked(SlotSeen slot, const std::string& over = "") {
    slot.lease.object["metadata"]["annotations"][k_slot_revoked_key] = "silent";
    slot.lease.object["metadata"]["annotations"][k_slot_revoked_over_key] = over;
    const auto committing = slot.lease.committing;
    slot.lease = slot_lease_of(slot.lease.object);
    slot.lease.committing = committing;
    return slot;
}

TEST(ClusterSlotDecision, OnlyALiveGrantOfThisGenerationToThisNodeIsHeld) {
    const std::vector<SlotSeen> slots{slot(0, "a"), slot(1, "n1")};
    const SlotDecision own = decide_granted_slot(slots, k_target, "n1", "");
    EXPECT_EQ(own.kind, Kind::hold);
    EXPECT_EQ(own.index, 1);
    ASSERT_NE(own.existing, nullptr);
    EXPECT_EQ(own.existing->lease.name, "spin-slot-1");
    EXPECT_EQ(decide_granted_slot({slot(0, "a")}, k_target, "n1", "").kind, Kind::wait);
    // Revoked or failed: not this node's to use any more.
    EXPECT_EQ(decide_granted_slot({revoked(slot(1, "n1"))}, k_target, "n1", "").kind, Kind::wait);
    EXPECT_EQ(decide_granted_slot({slot(1, "n1", k_target, "broke")}, k_target, "n1", "").kind,
              Kind::wait);
}

TEST(ClusterSlotDecision, AGrantOfAnOlderGenerationIsReleasedNotCarried) {
    // n1 holds slot 2 of generation 4 (3 slots); generation 5 has maxUpdate 1. Carrying slot 2
    // over would let n1 change beside whoever the coordinator grants slot 0.
    const std::vector<SlotSeen> slots{slot(2, "n1")};
    const RolloutTarget narrower{"spin", "u-1", 5, 1};
    EXPECT_EQ(decide_granted_slot(slots, narrower, "n1", "").kind, Kind::wait);
    const auto stale = own_stale_grants(slots, narrower, "n1");
    ASSERT_EQ(stale.size(), 1U);
    EXPECT_EQ(stale[0]->lease.name, slot_lease_name("spin", 2));
    EXPECT_TRUE(own_stale_grants(slots, narrower, "n2").empty()) << "not n2's";
    EXPECT_TRUE(own_stale_grants({slot(0, "n1", narrower)}, narrower, "n1").empty());
    // A failed one stays: it is the halt of its generation.
    EXPECT_TRUE(own_stale_grants({slot(2, "n1", k_target, "broke")}, narrower, "n1").empty());
}

TEST(ClusterSlotReclaim, TheCoordinatorKeepsLiveAndCurrentlyFailedSlotsAndFreesTheRest) {
    const auto now = Clock::now();
    const auto long_ago = now - seconds(16);
    RolloutTarget older = k_target;
    older.generation = 3;
    RolloutTarget recreated = k_target;
    recreated.uid = "u-0";
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a"), &k_shim_object, now, SlotReclaimWait::promised),
              std::nullopt);
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a", k_target, "broke", long_ago), &k_shim_object, now,
                                  SlotReclaimWait::promised),
              std::nullopt); // the halt stands
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a", older, "broke"), &k_shim_object, now,
                                  SlotReclaimWait::promised),
              (SlotFree{"failed at generation 3, the Shim is at 4", Action::delete_now}));
    EXPECT_EQ(
        slot_reclaim_reason(slot(0, "", k_target), &k_shim_object, now, SlotReclaimWait::promised),
        (SlotFree{"released", Action::delete_now}));
    // Gone, or recreated (another uid): a live holder is never deleted at once (the view may be
    // behind, or the holder still working): revoked first, like any silent holder.
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a"), nullptr, now, SlotReclaimWait::promised),
              std::nullopt);
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a", k_target, "", long_ago), nullptr, now,
                                  SlotReclaimWait::promised)
                  ->action,
              Action::revoke);
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a", recreated, "x"), &k_shim_object, now,
                                  SlotReclaimWait::promised),
              (SlotFree{"Shim spin is gone", Action::delete_now}));
    // The next look is when the first live slot runs out, failed ones never do.
    std::vector<SlotSeen> slots{slot(0, "a", k_target, "broke", long_ago),
                                slot(1, "b", k_target, "", now)};
    EXPECT_EQ(next_slot_expiry(slots, SlotReclaimWait::promised), now + seconds(15));
}

TEST(ClusterSlotReclaim, ASilentHolderIsRevokedFirstAndFreedOnlyARevokeLater) {
    const auto now = Clock::now();
    EXPECT_EQ(slot_reclaim_reason(slot(0, "a", k_target, "", now - seconds(16)), &k_shim_object,
                                  now, SlotReclaimWait::promised),
              (SlotFree{"holder a did not renew it within 15 s", Action::revoke}));
    // Revoked: kept for longer than any trust a node's read from before the revoke gave...
    const SlotSeen just = revoked(slot(0, "a", k_target, "", now - slot_timing::fresh_for));
    EXPECT_EQ(slot_reclaim_reason(just, &k_shim_object, now, SlotReclaimWait::promised),
              std::nullopt);
    EXPECT_EQ(next_slot_expiry({just}, SlotReclaimWait::promised),
              just.seen + slot_timing::revoked_for);
    // ...then deleted, unless its holder wrote meanwhile (the coordinator reads its Node).
    const SlotSeen due = revoked(slot(0, "a", k_target, "", now - seconds(12)));
    const auto free = slot_reclaim_reason(due, &k_shim_object, now, SlotReclaimWait::promised);
    ASSERT_TRUE(free);
    EXPECT_EQ(free->action, Action::delete_unless_renewed);
    EXPECT_EQ(due.lease.revoked, "silent");
}

// The coordinator broken on purpose (the fault switch slot-reclaim-early) reclaims every slot
// after half a lease: a test of the tests proves the cluster checks catch that.
TEST(ClusterSlotReclaim, TheWaitBrokenOnPurposeIsHalfALeaseForEverySlot) {
    const auto now = Clock::now();
    SlotSeen committing = slot(0, "a", k_target, "", now - seconds(8));
    committing.lease.committing = seconds(300);
    for (const SlotSeen& silent :
         {slot(0, "a", k_target, "", now - seconds(8)), revoked(slot(0, "a")), committing}) {
        EXPECT_EQ(slot_reclaim_after(silent.lease, SlotReclaimWait::half_lease),
                  slot_timing::free_after / 2);
    }
    const SlotSeen silent = slot(0, "a", k_target, "", now - seconds(8));
    EXPECT_EQ(slot_reclaim_reason(silent, &k_shim_object, now, SlotReclaimWait::promised),
              std::nullopt);
    EXPECT_EQ(slot_reclaim_reason(silent, &k_shim_object, now, SlotReclaimWait::half_lease),
              (SlotFree{"holder a did not renew it within 7 s", Action::revoke}));
    EXPECT_EQ(next_slot_expiry({silent}, SlotReclaimWait::half_lease),
              silent.seen + slot_timing::free_after / 2);
}

SlotSeen committing_slot(long seconds_marked, Clock::time_point seen) {
    SlotSeen out = slot(0, "a", k_target, "", seen);
    out.lease.committing = seconds(seconds_marked); // what the holder's entry says (judged view)
    return out;
}

TEST(ClusterSlotReclaim, ASlotPastItsHoldersPointOfNoReturnIsKeptForWhatTheHolderSaidItMayTake) {
    const auto now = Clock::now();
    // Marked committing for 300 s: unrenewed for a lease and more, it is still kept...
    EXPECT_EQ(slot_reclaim_reason(committing_slot(300, now - seconds(16)), &k_shim_object, now,
                                  SlotReclaimWait::promised),
              std::nullopt);
    EXPECT_EQ(slot_reclaim_reason(committing_slot(300, now - seconds(314)), &k_shim_object, now,
                                  SlotReclaimWait::promised),
              std::nullopt);
    // ...until a lease and the 300 s have passed on the coordinator's clock.
    EXPECT_EQ(
        slot_reclaim_reason(committing_slot(300, now - seconds(316)), &k_shim_object, now,
                            SlotReclaimWait::promised),
        (SlotFree{"holder a did not renew it within 315 s (a lease, and the 300 s it said its "
                  "transaction may take past its point of no return)",
                  Action::revoke}));
    EXPECT_EQ(next_slot_expiry({committing_slot(300, now)}, SlotReclaimWait::promised),
              now + seconds(315));
    // A huge one is cut to the maximum.
    EXPECT_EQ(next_slot_expiry({committing_slot(99999999, now)}, SlotReclaimWait::promised),
              now + slot_timing::free_after + k_max_commit_allowance);
}

TEST(ClusterSlotReclaim, ALeaseDurationOnTheLeaseDoesNotKeepItsSlotLonger) {
    const auto now = Clock::now();
    SlotSeen forever = slot(0, "a", k_target, "", now - seconds(16));
    forever.lease.object["spec"]["leaseDurationSeconds"] = 2147483647;
    forever.lease = slot_lease_of(forever.lease.object);
    EXPECT_EQ(slot_reclaim_reason(forever, &k_shim_object, now, SlotReclaimWait::promised),
              (SlotFree{"holder a did not renew it within 15 s", Action::revoke}));
}

TEST(ClusterSlotLease, TheLeaseNamesTheShimUidGenerationAndHolderAndIsItsOwnGrant) {
    json lease = slot_lease_for(k_target, 0, "n1", "T");
    lease["metadata"]["uid"] = "lease-uid-1";
    SlotLease parsed = slot_lease_of(lease);
    EXPECT_EQ(parsed.name, "spin-slot-0");
    EXPECT_EQ(parsed.shim, "spin");
    EXPECT_EQ(parsed.uid, "u-1");
    EXPECT_EQ(parsed.generation, 4);
    EXPECT_EQ(parsed.holder, "n1");
    EXPECT_EQ(parsed.grant, "lease-uid-1");
    EXPECT_TRUE(parsed.failed.empty());
    EXPECT_TRUE(parsed.revoked.empty());
    EXPECT_EQ(lease["metadata"]["labels"][k_slot_holder_label], "n1");
    // A failed Lease made for a grant that was gone stands for that grant.
    lease["metadata"]["annotations"][k_slot_grant_key] = "lease-uid-0";
    EXPECT_EQ(slot_lease_of(lease).grant, "lease-uid-0");
}

TEST(ClusterSlotLease, ALongShimNameStillGivesAValidDistinctLeaseName) {
    const std::string a(250, 'a');
    std::string b(249, 'a');
    b.push_back('b');
    EXPECT_LE(slot_lease_name(a, 12).size(), 253U);
    EXPECT_NE(slot_lease_name(a, 0), slot_lease_name(b, 0));
    EXPECT_TRUE(slot_lease_name(a, 12).ends_with("-slot-12"));
}

kubeapi::WatchEvent event(kubeapi::WatchEvent::Kind kind, json object) {
    kubeapi::WatchEvent out;
    out.kind = kind;
    out.object = std::move(object);
    return out;
}

TEST(ClusterSlotBoard, KeepsSlotLeasesFromTheWatchAndTellsWhichShimChanged) {
    SlotBoard board;
    std::vector<std::string> told;
    std::vector<bool> freed;
    board.set_listener([&](const std::string& shim, bool may_free) {
        told.push_back(shim);
        freed.push_back(may_free);
    });
    json coordinator = {
        {"metadata", {{"name", "shimkeeper-coordinator"}, {"resourceVersion", "1"}}}};
    kubeapi::WatchEvent synced;
    synced.items = {coordinator, slot(0, "a").lease.object};
    board.apply(synced, Clock::now());
    EXPECT_TRUE(board.synced());
    ASSERT_EQ(board.slots().size(), 1U); // the coordinator's Lease is not a slot
    board.apply(event(kubeapi::WatchEvent::Kind::added, slot(1, "b").lease.object), Clock::now());
    EXPECT_EQ(board.slots().size(), 2U);
    board.apply(event(kubeapi::WatchEvent::Kind::deleted, slot(0, "a").lease.object), Clock::now());
    ASSERT_EQ(board.slots().size(), 1U);
    EXPECT_EQ(board.slots()[0].lease.name, "spin-slot-1");
    EXPECT_EQ(told, (std::vector<std::string>{"spin", "spin", "spin"}));
    EXPECT_EQ(freed, (std::vector<bool>{false, false, true})); // only the deletion frees one
    // A re-list that drops a slot removes it and says so.
    kubeapi::WatchEvent relisted;
    relisted.items = {coordinator};
    board.apply(relisted, Clock::now());
    EXPECT_TRUE(board.slots().empty());
    EXPECT_EQ(told.size(), 4U);
}

TEST(ClusterSlotBoard, SlotsArriveInAnyOrderAndAreKeptInNameOrderOneEach) {
    SlotBoard board;
    for (int index : {2, 0, 1, 0}) {
        board.apply(event(kubeapi::WatchEvent::Kind::added,
                          slot(index, "n" + std::to_string(index)).lease.object),
                    Clock::now());
    }
    json newer = slot(1, "m").lease.object;
    newer["metadata"]["resourceVersion"] = "999";
    board.apply(event(kubeapi::WatchEvent::Kind::modified, newer), Clock::now());
    ASSERT_EQ(board.slots().size(), 3U);
    EXPECT_EQ(board.slots()[0].lease.name, "spin-slot-0");
    EXPECT_EQ(board.slots()[1].lease.holder, "m"); // replaced in place, not added
    EXPECT_EQ(board.slots()[2].lease.name, "spin-slot-2");
    board.apply(event(kubeapi::WatchEvent::Kind::deleted, slot(1, "m").lease.object), Clock::now());
    ASSERT_EQ(board.slots().size(), 2U);
    EXPECT_EQ(board.slots()[1].lease.name, "spin-slot-2");
}

TEST(ClusterSlotBoard, TheSameVersionSeenAgainKeepsItsClockRunning) {
    SlotBoard board;
    const auto t0 = Clock::now();
    json lease = slot(0, "a").lease.object;
    board.apply(event(kubeapi::WatchEvent::Kind::added, lease), t0);
    EXPECT_EQ(board.slots()[0].seen, t0);
    board.apply(event(kubeapi::WatchEvent::Kind::modified, lease), t0 + seconds(5));
    EXPECT_EQ(board.slots()[0].seen, t0);
    // A new version restarts it, at the time it is seen.
    lease["metadata"]["resourceVersion"] = "999";
    board.apply(event(kubeapi::WatchEvent::Kind::modified, lease), t0 + seconds(9));
    EXPECT_EQ(board.slots()[0].seen, t0 + seconds(9));
}

// A coordinator whose clock runs 20 s behind lists a slot renewed a moment ago: its renewTime
// reads 20 s old here. It is live all the same (never the writer's clock against this one).
TEST(ClusterSlotBoard, AListedLeaseIsNeverJudgedByItsRenewTimeAgainstThisClock) {
    json lease = slot(0, "a", {"spin", "u-1", 4, 1}).lease.object;
    lease["spec"]["renewTime"] =
        kubeapi::micro_time(std::chrono::system_clock::now() - seconds(20));
    SlotBoard board = SlotBoard::from_list({lease}, Clock::now());
    ASSERT_EQ(board.slots().size(), 1U);
    EXPECT_EQ(slot_reclaim_reason(board.slots()[0], &k_shim_object, Clock::now(),
                                  SlotReclaimWait::promised),
              std::nullopt);
}

TEST(ClusterRolloutStatus, AFailedSlotOfTheCurrentGenerationHaltsTheRolloutNamingNodeAndResume) {
    json shim = shim_with({{"rolling", {{"maxUpdate", "50%"}}}});
    Rollup rollup;
    rollup.generation = 4;
    rollup.counts.selected = 5;
    RolloutStatus running = rollout_status(shim, rollup, {slot(0, "a")}, {});
    EXPECT_EQ(running.slots, 3);
    EXPECT_EQ(running.halted.status, ConditionStatus::false_);
    RolloutStatus halted =
        rollout_status(shim, rollup, {slot(2, "bad", k_target, "containerd refused it")}, {});
    EXPECT_EQ(halted.halted.status, ConditionStatus::true_);
    EXPECT_EQ(halted.halted.reason, "NodeFailed");
    EXPECT_NE(halted.halted.message.find("node bad failed at generation 4: containerd refused it"),
              std::string::npos);
    EXPECT_NE(halted.halted.message.find("kubectl -n shimkeeper-system delete lease spin-slot-2"),
              std::string::npos);
    RolloutStatus recreate = rollout_status(shim_with(nullptr), rollup, {}, {});
    EXPECT_EQ(recreate.slots, std::nullopt);
    EXPECT_EQ(recreate.halted.reason, "Recreate");
}

} // namespace cluster_rollout_slots
} // namespace
} // namespace shimkeeper::cluster::model
