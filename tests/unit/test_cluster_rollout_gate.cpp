// The node side of a rolling rollout, pure parts: which Shims need a slot before this node may
// change them, the desired state with those the node may not change yet held as they run, and
// which slot the daemon took between reconciles the next reconcile may use.
#include "shimkeeper/cluster/agent/cluster_report.hpp"
#include "shimkeeper/cluster/agent/rollout_gate.hpp"
#include "unit/cluster_fixtures.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {
namespace cluster_rollout_gate {

using namespace fixtures;

json rolling(json shim, json max_update = 2) {
    shim["metadata"]["uid"] = "u-" + shim["metadata"]["name"].get<std::string>();
    shim["spec"]["rolloutStrategy"] = {{"type", "rolling"},
                                       {"rolling", {{"maxUpdate", max_update}}}};
    return shim;
}

// The current generation as the cluster installed it (origin Shim/<name>@<rv>).
store::StoreState installed_from_cluster(const std::vector<json>& objects) {
    std::vector<spec::ShimSpec> specs;
    for (const json& object : objects) {
        specs.push_back(spec_of(object));
    }
    return state_with(specs);
}

std::vector<std::string> names(const std::vector<SlotNeed>& needs) {
    std::vector<std::string> out;
    for (const auto& need : needs) {
        out.push_back(need.shim);
    }
    return out;
}

TEST(ClusterRolloutGate, InstallUpgradeAndRemovalOfARollingShimNeedASlotNothingElseDoes) {
    const json fresh = rolling(shim_object("fresh", 1, k_sha_a));       // not installed yet
    const json upgraded = rolling(shim_object("upgraded", 2, k_sha_b)); // runs k_sha_a now
    const json same = rolling(shim_object("same", 3, k_sha_a));         // runs exactly this
    const json leaving = rolling(shim_object("leaving", 1, k_sha_a));   // no longer selects
    const json recreate = shim_object("recreate", 2, k_sha_b);          // no strategy
    ClusterReading reading;
    reading.shims = {on_node(fresh, true), on_node(upgraded, true), on_node(same, true),
                     on_node(leaving, false), on_node(recreate, true)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(fresh), spec_of(upgraded), spec_of(same), spec_of(recreate)};
    const store::StoreState state =
        installed_from_cluster({rolling(shim_object("upgraded", 1, k_sha_a)), same, leaving,
                                shim_object("recreate", 1, k_sha_a)});
    const auto needs = slot_needs(reading, desired, state);
    EXPECT_EQ(names(needs), (std::vector<std::string>{"fresh", "upgraded", "leaving"}));
    ASSERT_TRUE(needs[1].target);
    EXPECT_EQ(needs[1].target->generation, 2);
    EXPECT_EQ(needs[1].target->uid, "u-upgraded");
    EXPECT_EQ(needs[1].target->slots, 2);
}

TEST(ClusterRolloutGate, APercentageWaitsForTheCoordinatorsSlotCount) {
    json shim = rolling(shim_object("spin", 1, k_sha_a), "25%");
    ClusterReading reading;
    reading.shims = {on_node(shim, true)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(shim)};
    auto needs = slot_needs(reading, desired, store::StoreState{});
    ASSERT_EQ(needs.size(), 1U);
    EXPECT_FALSE(needs[0].target);
    EXPECT_NE(needs[0].why_unresolved.find("resolve maxUpdate"), std::string::npos);
    shim["status"] = {{"observedGeneration", 1}, {"slots", 2}};
    reading.shims = {on_node(shim, true)};
    needs = slot_needs(reading, desired, store::StoreState{});
    ASSERT_TRUE(needs[0].target);
    EXPECT_EQ(needs[0].target->slots, 2);
}

// One edit changes the artifact and lowers maxUpdate from 100% to 25%: the status still holds
// the count of 100% (generation 1) until the coordinator has seen generation 2. A node waits.
TEST(ClusterRolloutGate, ASlotCountResolvedForAnotherGenerationIsNeverUsed) {
    json shim = rolling(shim_object("spin", 2, k_sha_b), "25%");
    shim["status"] = {{"observedGeneration", 1}, {"slots", 8}};
    ClusterReading reading;
    reading.shims = {on_node(shim, true)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(shim)};
    const store::StoreState state =
        installed_from_cluster({rolling(shim_object("spin", 1, k_sha_a), "100%")});
    auto needs = slot_needs(reading, desired, state);
    ASSERT_EQ(needs.size(), 1U);
    EXPECT_FALSE(needs[0].target) << "used the slot count of generation 1 for generation 2";
    EXPECT_NE(needs[0].why_unresolved.find("resolve maxUpdate"), std::string::npos);
    shim["status"] = {{"observedGeneration", 2}, {"slots", 2}};
    reading.shims = {on_node(shim, true)};
    needs = slot_needs(reading, desired, state);
    ASSERT_TRUE(needs[0].target);
    EXPECT_EQ(needs[0].target->slots, 2);
    // An absolute maxUpdate needs no status at all: the spec says it.
    json counted = rolling(shim_object("spin", 3, k_sha_b), 3);
    counted["status"] = {{"observedGeneration", 1}, {"slots", 8}};
    reading.shims = {on_node(counted, true)};
    desired.shims = {spec_of(counted)};
    needs = slot_needs(reading, desired, state);
    ASSERT_TRUE(needs[0].target);
    EXPECT_EQ(needs[0].target->slots, 3);
}

TEST(ClusterRolloutGate, AShimHeldBackStaysAsTheNodeRunsItOrAbsent) {
    const json old_up = rolling(shim_object("upgraded", 1, k_sha_a));
    const json up = rolling(shim_object("upgraded", 2, k_sha_b));
    const json fresh = rolling(shim_object("fresh", 1, k_sha_a));
    const json leaving = rolling(shim_object("leaving", 1, k_sha_a));
    spec::DesiredShims desired;
    desired.shims = {spec_of(up), spec_of(fresh)};
    const store::StoreState state = installed_from_cluster({old_up, leaving});
    auto held = held_back_desired(desired, state, {"upgraded", "fresh", "leaving"});
    ASSERT_TRUE(held) << held.error().message();
    ASSERT_EQ(held->shims.size(), 2U);
    for (const auto& spec : held->shims) {
        const store::InstalledShim* have = state.current_generation()->find(spec.name);
        ASSERT_NE(have, nullptr) << spec.name;
        // Exactly what runs: the transaction changes nothing of it, and it is still the Shim's.
        EXPECT_TRUE(
            reconcile::differences(reconcile::record_of(spec, *spec.fetch.sha256, ""), *have)
                .empty())
            << spec.name;
        EXPECT_TRUE(spec.location.to_string().starts_with("Shim/" + spec.name + "@"))
            << spec.location.to_string();
    }
}

TEST(ClusterRolloutGate, TheNodeSaysNothingNewOfAShimThatWaitsForItsTurn) {
    const json up = rolling(shim_object("upgraded", 2, k_sha_b));
    ClusterReading reading;
    reading.shims = {on_node(up, true)};
    reading.view.node = {
        {"metadata",
         {{"name", "n1"},
          {"labels", {{"shim.containerd.x-k8s.io/upgraded", "true"}}},
          {"annotations",
           {{"shim.containerd.x-k8s.io/upgraded", R"({"state":"installed","generation":1})"}}}}}};
    const store::StoreState state =
        installed_from_cluster({rolling(shim_object("upgraded", 1, k_sha_a))});
    auto held = held_back_desired(spec::DesiredShims{{spec_of(up)}, {}, {}}, state, {"upgraded"});
    const auto report = report_after(reading, *held, {}, state, reconcile::Restart::yes,
                                     {{"upgraded", "waiting for a rollout slot"}});
    EXPECT_FALSE(report.wanted.contains("upgraded"));
    EXPECT_EQ(std::ranges::find(report.forget, "upgraded"), report.forget.end());
}

ClaimedSlots claim(const model::RolloutTarget& target, std::chrono::steady_clock::time_point at) {
    json lease = {
        {"metadata", {{"name", model::slot_lease_name(target.shim, 0)}, {"resourceVersion", "7"}}}};
    return {{target.shim, HeldSlot{target, lease, {}, at, {}}}};
}

TEST(ClusterRolloutGate, ASlotClaimedForThisGenerationIsUsedOnceWithTheSlotCountOfNow) {
    const auto now = std::chrono::steady_clock::now();
    ClaimedSlots claimed = claim({"demo", "u-demo", 3, 2}, now - std::chrono::seconds(1));
    auto used = use_claimed(claimed, {"demo", "u-demo", 3, 5}, now);
    ASSERT_TRUE(used);
    EXPECT_EQ(used->lease["metadata"]["resourceVersion"], "7"); // the version to renew from
    EXPECT_EQ(used->target.slots, 5);
    EXPECT_TRUE(claimed.empty());
    EXPECT_FALSE(use_claimed(claimed, {"demo", "u-demo", 3, 5}, now));
}

TEST(ClusterRolloutGate, ASlotClaimedForAnotherGenerationOrObjectIsLeftToBeReleased) {
    const auto now = std::chrono::steady_clock::now();
    ClaimedSlots claimed = claim({"demo", "u-demo", 3, 2}, now);
    EXPECT_FALSE(use_claimed(claimed, {"demo", "u-demo", 4, 2}, now));
    EXPECT_FALSE(use_claimed(claimed, {"demo", "u-other", 3, 2}, now));
    EXPECT_FALSE(use_claimed(claimed, {"other", "u-demo", 3, 2}, now));
    EXPECT_EQ(claimed.size(), 1U);
}

TEST(ClusterRolloutGate, AClaimOlderThanAThirdOfTheLeaseIsNotTrustedWithoutARenewal) {
    const auto now = std::chrono::steady_clock::now();
    ClaimedSlots claimed =
        claim({"demo", "u-demo", 3, 2},
              now - model::slot_timing::claim_usable_for - std::chrono::milliseconds(1));
    EXPECT_FALSE(use_claimed(claimed, {"demo", "u-demo", 3, 2}, now));
    EXPECT_EQ(claimed.size(), 1U);
    // Its grant is adopted again, not released: the claim leaves what release_unclaimed gives back.
    auto expired = take_expired_claim(claimed, {"demo", "u-demo", 3, 2}, now);
    ASSERT_TRUE(expired);
    EXPECT_EQ(expired->lease["metadata"]["name"], "demo-slot-0");
    EXPECT_TRUE(claimed.empty());
}

TEST(ClusterRolloutGate, OnlyAnOldClaimForTheSameGenerationIsTakenAgain) {
    const auto now = std::chrono::steady_clock::now();
    const auto old = now - model::slot_timing::claim_usable_for - std::chrono::milliseconds(1);
    ClaimedSlots fresh = claim({"demo", "u-demo", 3, 2}, now);
    EXPECT_FALSE(take_expired_claim(fresh, {"demo", "u-demo", 3, 2}, now)); // use_claimed's
    ClaimedSlots claimed = claim({"demo", "u-demo", 3, 2}, old);
    EXPECT_FALSE(take_expired_claim(claimed, {"demo", "u-demo", 4, 2}, now));
    EXPECT_FALSE(take_expired_claim(claimed, {"demo", "u-other", 3, 2}, now));
    EXPECT_FALSE(take_expired_claim(claimed, {"other", "u-demo", 3, 2}, now));
    EXPECT_EQ(claimed.size(), 1U); // left to be released
}

HeldSlot held_slot(const std::string& me, const std::string& grant) {
    const model::RolloutTarget target{"spin", "u-spin", 2, 1};
    json lease = model::slot_lease_for(target, 0, me, "2026-11-24T10:00:00.000000Z");
    lease["metadata"]["resourceVersion"] = "10";
    lease["metadata"]["uid"] = grant;
    HeldSlot held = held_of(model::slot_lease_of(lease));
    held.confirmed = std::chrono::steady_clock::now();
    return held;
}

// The point of no return needs a slot confirmed within two thirds of its lease (its entry written,
// then the grant read unrevoked): the coordinator frees it only a revoke's wait after a revoke
// that came after that read, so nobody else can hold it yet; a lost slot never passes.
TEST(ClusterRolloutGate, OnlyASlotConfirmedWithinTwoThirdsOfItsLeaseAndNotLostIsFresh) {
    HeldSlot held = held_slot("n1", "grant-1");
    const auto now = held.confirmed;
    EXPECT_EQ(why_slot_not_fresh(held, now + std::chrono::seconds(9)), std::nullopt);
    auto stale = why_slot_not_fresh(held, now + std::chrono::seconds(10));
    ASSERT_TRUE(stale);
    EXPECT_NE(stale->find("spin-slot-0 was last confirmed by the API server 10 s ago"),
              std::string::npos)
        << *stale;
    held.lost = "node n2 holds it now";
    auto lost = why_slot_not_fresh(held, now);
    ASSERT_TRUE(lost);
    EXPECT_NE(lost->find("no longer this node's: node n2 holds it now"), std::string::npos);
}

// Past the point of no return only on a fresh slot whose committing mark was in a confirmed
// renewal: written on the Node, then the grant read unrevoked.
TEST(ClusterRolloutGate, OnlyAFreshSlotWithAConfirmedCommittingMarkLetsTheChangeBegin) {
    HeldSlot held = held_slot("n1", "grant-1");
    const auto now = held.confirmed;
    auto unmarked = why_slot_not_committed(held, now);
    ASSERT_TRUE(unmarked);
    EXPECT_NE(unmarked->find("has not confirmed this node's mark on rollout slot spin-slot-0"),
              std::string::npos)
        << *unmarked;
    held.committing = std::chrono::seconds(300); // asked for, not yet in a confirmed version
    EXPECT_TRUE(why_slot_not_committed(held, now));
    held.hold.committing = std::chrono::seconds(300); // written, its read not back yet
    EXPECT_TRUE(why_slot_not_committed(held, now));
    held.confirmed_committing = std::chrono::seconds(300);
    EXPECT_EQ(why_slot_not_committed(held, now), std::nullopt);
    auto stale = why_slot_not_committed(held, now + std::chrono::seconds(10));
    ASSERT_TRUE(stale);
    EXPECT_NE(stale->find("may be another node's by now"), std::string::npos) << *stale;
}

// A renewal reads the grant after writing its entry: only the grant this node took (its uid),
// still its own, neither failed nor revoked, is still held; the same name granted again (even to
// this node) is another grant.
TEST(ClusterRolloutGate, AGrantIsStillHeldOnlyIfItIsTheOneThisNodeTookAndNotRevoked) {
    const HeldSlot held = held_slot("n1", "grant-1");
    json renewed = held.lease;
    renewed["metadata"]["resourceVersion"] = "11";
    EXPECT_EQ(why_not_held(model::slot_lease_of(renewed), held, "n1"), std::nullopt);
    EXPECT_EQ(why_not_held(model::slot_lease_of(held_slot("n2", "grant-1").lease), held, "n1"),
              "it was granted anew since (to n2)");
    EXPECT_EQ(why_not_held(model::slot_lease_of(held_slot("n1", "grant-2").lease), held, "n1"),
              "it was granted anew since (to n1)");
    json failed = renewed;
    failed["metadata"]["annotations"][model::k_slot_failed_key] = "boom";
    EXPECT_EQ(why_not_held(model::slot_lease_of(failed), held, "n1"), "it is marked failed");
    json revoked = renewed;
    revoked["metadata"]["annotations"][model::k_slot_revoked_key] = "holder n1 did not renew it";
    EXPECT_EQ(why_not_held(model::slot_lease_of(revoked), held, "n1"),
              "the coordinator revoked it: holder n1 did not renew it");
}

// One bad Shim halts its own rollout, not the others' a node holds slots for; a failure about no
// Shim at all (the API server, the disk, a broken shims.d file) halts nothing.
TEST(ClusterRolloutGate, AFailureHaltsOnlyTheShimsItIsAbout) {
    reconcile::Outcome rolled_back;
    rolled_back.result = reconcile::TxnResult::rolled_back;
    rolled_back.blamed = {"bad"};
    EXPECT_EQ(shims_to_halt(rolled_back, {}), std::set<std::string>{"bad"});
    const util::Expected<reconcile::Outcome> refused =
        std::unexpected(util::Error(util::ErrorCode::checksum, "sha256 mismatch"));
    EXPECT_EQ(shims_to_halt(refused, {"bad"}), std::set<std::string>{"bad"});
    EXPECT_TRUE(
        shims_to_halt(std::unexpected(util::Error(util::ErrorCode::network, "429")), {}).empty());
    rolled_back.blamed.clear();
    EXPECT_TRUE(shims_to_halt(rolled_back, {}).empty()) << "a config the node could not write";
    EXPECT_TRUE(shims_to_halt(reconcile::Outcome{}, {"bad"}).empty()) << "committed";
}

} // namespace cluster_rollout_gate
} // namespace
} // namespace shimkeeper::cluster::agent
