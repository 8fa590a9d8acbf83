// A node's side of its rollout slots (slot_keeper.hpp) against the in-memory API server: what the
// node writes on its own Node when it adopts, takes, renews, releases or fails a slot, and when it
// stops trusting a grant.
#include "fake_api_client.hpp"
#include "shimkeeper/cluster/agent/slot_keeper.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_hold.hpp"
#include "shimkeeper/cluster/model/write_refusals.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {
namespace cluster_slot_keeper {

using kubeapi::FakeApiClient;
using nlohmann::json;

const std::string k_ns = "shimkeeper";
const std::string k_me = "n1";

class SlotKeeperTest : public ::testing::Test {
protected:
    SlotKeeperTest() { api.put(kubeapi::nodes_resource(), "", {{"metadata", {{"name", k_me}}}}); }

    // The coordinator's grant of slot 0 to `holder`, as the API server stores it.
    json grant(const std::string& holder) {
        return api.put(
            kubeapi::leases_resource(), k_ns,
            model::granted_slot_lease({target, 0, holder}, "2026-11-30T01:00:00.000000Z"));
    }

    // The grant as the node's view shows it, adopted: nothing is written.
    std::optional<HeldSlot> adopt(const json& lease) {
        seen = {model::slot_lease_of(lease), std::chrono::steady_clock::now()};
        model::SlotDecision decision;
        decision.kind = model::SlotDecision::Kind::hold;
        decision.index = 0;
        decision.existing = &seen;
        return SlotKeeper::adopt(target, decision, std::chrono::steady_clock::now());
    }

    // Adopted, then taken by its first write (a renewal round's; the report's goes through
    // confirm_written).
    HeldSlot take(const json& lease) {
        HeldSlot held = adopt(lease).value();
        const auto taken = keeper.renew(held);
        EXPECT_TRUE(taken) << taken.error().message();
        return held;
    }

    // The first write of an adopted slot, failing with `code`: an error that says it was a take,
    // and the slot still not taken.
    void expect_take_fails(HeldSlot& held, util::ErrorCode code) {
        const auto taken = keeper.renew(held);
        ASSERT_FALSE(taken);
        EXPECT_EQ(taken.error().code(), code);
        EXPECT_NE(taken.error().message().find("taking rollout slot"), std::string::npos)
            << taken.error().message();
        EXPECT_FALSE(held.taken());
    }

    // This node's entry for the Shim on its own Node, as the API server has it.
    std::optional<model::SlotHold> entry() const {
        const json node = *api.find(kubeapi::nodes_resource(), "", k_me);
        const json annotations = node["metadata"].value("annotations", json::object());
        const auto text = annotations.find(model::slot_hold_key(target.shim));
        if (text == annotations.end()) {
            return std::nullopt;
        }
        return model::slot_hold_of(text->get<std::string>());
    }

    model::RolloutTarget target{"spin", "u-1", 3, 1};
    FakeApiClient api;
    SlotKeeper keeper{api, k_ns, k_me};
    model::SlotSeen seen;
};

TEST_F(SlotKeeperTest, AnAdoptedGrantIsNotTakenUntilItsFirstWrite) {
    const json lease = grant(k_me);
    const auto adopted = adopt(lease);
    ASSERT_TRUE(adopted);
    const HeldSlot& slot = *adopted;
    EXPECT_TRUE(api.calls().empty()) << "adopting a grant asks nothing";
    EXPECT_FALSE(entry());
    EXPECT_FALSE(slot.taken());
    EXPECT_EQ(slot.hold.lease, kubeapi::name_of(lease));
    EXPECT_EQ(slot.hold.grant, lease["metadata"]["uid"].get<std::string>())
        << "the grant is the Lease's uid";
    const auto now = std::chrono::steady_clock::now();
    EXPECT_EQ(why_slot_not_fresh(slot, now), std::nullopt) << "seen granted just now";
    EXPECT_TRUE(why_slot_not_fresh(slot, now + model::slot_timing::fresh_for))
        << "a grant seen too long ago and not taken since";
    EXPECT_TRUE(why_slot_not_committed(slot, now)) << "nothing confirmed: no point of no return";
}

TEST_F(SlotKeeperTest, TheFirstWriteTakesTheSlotOnTheOwnNodeThenConfirmsTheGrant) {
    const json lease = grant(k_me);
    HeldSlot slot = adopt(lease).value();
    const auto taken = keeper.renew(slot);
    ASSERT_TRUE(taken) << taken.error().message();
    EXPECT_TRUE(slot.taken());
    EXPECT_EQ(entry(), slot.hold);
    EXPECT_EQ(why_slot_not_fresh(slot, std::chrono::steady_clock::now()), std::nullopt);
    EXPECT_EQ(api.calls(),
              (std::vector<FakeApiClient::Call>{{"merge_patch", "nodes", k_me},
                                                {"get", "leases", kubeapi::name_of(lease)}}))
        << "the entry first, then the grant read: never a write to the Lease";
}

// A grant from a view of unknown age is taken at once, before the Node may say `installing`.
TEST_F(SlotKeeperTest, ATakeAtOnceWritesTheEntryThenReadsTheGrant) {
    const json lease = grant(k_me);
    seen = {model::slot_lease_of(lease), std::chrono::steady_clock::now()};
    model::SlotDecision decision;
    decision.kind = model::SlotDecision::Kind::hold;
    decision.existing = &seen;
    const auto taken = keeper.take(target, decision);
    ASSERT_TRUE(taken) << taken.error().message();
    ASSERT_TRUE(taken->has_value());
    EXPECT_TRUE((*taken)->taken());
    EXPECT_EQ(entry(), (*taken)->hold);
    EXPECT_EQ(api.calls(),
              (std::vector<FakeApiClient::Call>{{"merge_patch", "nodes", k_me},
                                                {"get", "leases", kubeapi::name_of(lease)}}));

    ASSERT_TRUE(api.remove(kubeapi::leases_resource(), k_ns, kubeapi::name_of(lease)));
    const auto gone = keeper.take(target, decision);
    ASSERT_TRUE(gone) << "a grant gone is no error: " << gone.error().message();
    EXPECT_FALSE(gone->has_value());
}

TEST_F(SlotKeeperTest, AGrantRevokedBeforeTheTakeIsNotHeld) {
    json lease = grant(k_me);
    const auto judged = lease;
    lease["metadata"]["annotations"][model::k_slot_revoked_key] = "not renewed";
    api.put(kubeapi::leases_resource(), k_ns, lease);
    HeldSlot held = adopt(judged).value();
    expect_take_fails(held, util::ErrorCode::conflict);
    EXPECT_NE(held.lost.find("revoked"), std::string::npos) << held.lost;
    EXPECT_TRUE(entry()) << "the entry is written all the same: it is what withdraws a revoke";
}

TEST_F(SlotKeeperTest, AGrantGoneBeforeTheTakeIsNotHeld) {
    const json lease = grant(k_me);
    ASSERT_TRUE(api.remove(kubeapi::leases_resource(), k_ns, kubeapi::name_of(lease)));
    HeldSlot held = adopt(lease).value();
    ASSERT_FALSE(keeper.renew(held));
    EXPECT_TRUE(held.gone);
    EXPECT_FALSE(held.taken());
}

TEST_F(SlotKeeperTest, ARenewalRewritesTheEntryAndConfirmsTheGrantAgain) {
    auto held = take(grant(k_me));
    held.committing = std::chrono::seconds(40);
    ASSERT_TRUE(keeper.renew(held));
    EXPECT_FALSE(held.hold.renewed.empty());
    EXPECT_EQ(entry(), held.hold);
    EXPECT_EQ(held.confirmed_committing, std::chrono::seconds(40));
    EXPECT_EQ(why_slot_not_committed(held, std::chrono::steady_clock::now()), std::nullopt);
}

TEST_F(SlotKeeperTest, ARenewalFindsAGrantMadeAnewForAnotherNodeAndLetsItGo) {
    const json lease = grant(k_me);
    auto held = take(lease);
    ASSERT_TRUE(api.remove(kubeapi::leases_resource(), k_ns, kubeapi::name_of(lease)));
    grant("n2"); // the same name, another grant
    const auto renewed = keeper.renew(held);
    ASSERT_FALSE(renewed);
    EXPECT_EQ(renewed.error().code(), util::ErrorCode::conflict);
    EXPECT_TRUE(held.gone);
    EXPECT_NE(held.lost.find("n2"), std::string::npos) << held.lost;
    EXPECT_TRUE(why_slot_not_fresh(held, std::chrono::steady_clock::now()));
}

TEST_F(SlotKeeperTest, AReleaseSaysDoneAndAFailureSaysItsReason) {
    const auto held = take(grant(k_me));
    ASSERT_TRUE(keeper.release(held));
    EXPECT_TRUE(entry()->done);
    const auto failed = keeper.fail(held, "health check failed");
    ASSERT_TRUE(failed);
    EXPECT_EQ(*failed, held.hold.lease);
    EXPECT_EQ(entry()->failed, "health check failed");
    EXPECT_TRUE(api.calls_of("update", "leases").empty()) << "the node writes no Lease";
}

// The keeper remembers released grants for the whole process, by uid; FakeApiClient's uids count
// from 1 in each test, so this test (like ctest, which runs each test alone) wants a process of its
// own.
TEST_F(SlotKeeperTest, AGrantReleasedIsNeverTakenAgainThoughAViewStillShowsIt) {
    const json lease = grant(k_me);
    const auto held = take(lease);
    ASSERT_TRUE(keeper.release(held));
    // The coordinator has not acted on the release yet: the grant still names this node.
    EXPECT_FALSE(adopt(lease)) << "a released grant was adopted back";
    EXPECT_TRUE(entry()->done) << "the release stands: nothing was written over it";
}

// A release that goes with the Node report (released_hold) counts as released before any write:
// the report may reach the API server and still fail here.
TEST_F(SlotKeeperTest, AReleaseForTheReportIsDoneAndItsGrantIsNeverTakenAgain) {
    const json lease = grant(k_me);
    const auto held = take(lease);
    const auto writes = api.calls_of("merge_patch", "nodes").size();
    const model::SlotHold done = SlotKeeper::released_hold(held);
    EXPECT_TRUE(done.done);
    EXPECT_EQ(done.grant, held.hold.grant);
    EXPECT_EQ(api.calls_of("merge_patch", "nodes").size(), writes)
        << "the report writes it, not the keeper";
    EXPECT_FALSE(adopt(lease)) << "a grant released with the report was adopted back";
}

// A committing mark that the Node report carried (rollout_gate.hpp), with the take of a slot
// adopted only: the keeper writes nothing itself, and the slot counts as taken and committed only
// once the grant, read after, is still this node's.
TEST_F(SlotKeeperTest, AMarkCarriedByAnotherWriteIsConfirmedOnlyByReadingTheGrantAfter) {
    const json lease = grant(k_me);
    auto held = adopt(lease).value();
    held.committing = std::chrono::seconds(40);
    const model::SlotHold carried = SlotKeeper::renewed_hold(held);
    EXPECT_EQ(carried.committing, std::chrono::seconds(40));
    EXPECT_FALSE(carried.renewed.empty());
    const auto writes = api.calls_of("merge_patch", "nodes").size();
    const auto gets = api.calls_of("get", "leases").size();
    const auto sent = std::chrono::steady_clock::now();
    ASSERT_TRUE(keeper.confirm_written(held, carried, sent));
    EXPECT_EQ(api.calls_of("merge_patch", "nodes").size(), writes)
        << "the report writes the entry, not the keeper";
    EXPECT_EQ(api.calls_of("get", "leases").size(), gets + 1);
    EXPECT_EQ(held.hold, carried);
    EXPECT_EQ(held.confirmed, sent);
    EXPECT_TRUE(held.taken());
    EXPECT_EQ(why_slot_not_committed(held, sent), std::nullopt);

    // The grant revoked meanwhile: not confirmed, and the transaction may not go on.
    auto revoked = adopt(lease).value();
    revoked.committing = std::chrono::seconds(40);
    json changed = *api.find(kubeapi::leases_resource(), k_ns, kubeapi::name_of(lease));
    changed["metadata"]["annotations"][std::string(model::k_slot_revoked_key)] = "test";
    api.put(kubeapi::leases_resource(), k_ns, changed);
    const auto refused = keeper.confirm_written(revoked, SlotKeeper::renewed_hold(revoked), sent);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), util::ErrorCode::conflict);
    EXPECT_NE(revoked.lost.find("revoked"), std::string::npos) << revoked.lost;
    EXPECT_TRUE(why_slot_not_committed(revoked, std::chrono::steady_clock::now()));
}

// Past its point of no return a slot is kept by the coordinator for a lease plus the allowance its
// confirmed mark states: once the transaction changes (past its last freshness check), the renewal
// rounds leave it alone until that allowance has passed; before, every round renews.
TEST_F(SlotKeeperTest, AConfirmedMarkNeedsNoRenewalWhileChangingUntilItsAllowanceHasPassed) {
    using std::chrono::seconds;
    const json lease = grant(k_me);
    auto held = adopt(lease).value();
    EXPECT_TRUE(renewal_due(held, true, std::chrono::steady_clock::now())) << "not taken yet";
    held = take(lease);
    EXPECT_TRUE(renewal_due(held, true, held.confirmed)) << "taken, no mark";

    held.committing = seconds(40); // the gate asks for the mark: the next round carries it
    EXPECT_TRUE(renewal_due(held, true, held.confirmed)) << "a mark asked for, not confirmed";
    const auto sent = held.confirmed + seconds(1);
    ASSERT_TRUE(keeper.confirm_written(held, SlotKeeper::renewed_hold(held), sent));
    EXPECT_TRUE(renewal_due(held, false, sent + seconds(5)))
        << "the last freshness check is still to come (after the write-ahead)";
    EXPECT_FALSE(renewal_due(held, true, sent));
    EXPECT_FALSE(renewal_due(held, true, sent + seconds(39)));
    EXPECT_TRUE(renewal_due(held, true, sent + seconds(40))) << "the allowance has passed";

    held.committing = seconds(60); // a longer mark asked for than the one confirmed
    EXPECT_TRUE(renewal_due(held, true, sent));

    held.committing = held.confirmed_committing = model::k_max_commit_allowance + seconds(600);
    EXPECT_TRUE(renewal_due(held, true, sent + model::k_max_commit_allowance))
        << "the coordinator honours no mark beyond k_max_commit_allowance";
}

TEST_F(SlotKeeperTest, ARefusedWriteIsAnErrorAndAWarningEventAboutTheShim) {
    target.shim = "refused-here"; // the notices are per process: a Shim of this test alone
    const json lease = grant(k_me);
    api.fail_next("merge_patch", "nodes",
                  util::Error(util::ErrorCode::refused, "nodes \"n1\" is forbidden (HTTP 403)"));
    HeldSlot held = adopt(lease).value();
    expect_take_fails(held, util::ErrorCode::refused);
    EXPECT_FALSE(entry());
    const auto waits = why_slot_not_committed(held, std::chrono::steady_clock::now());
    ASSERT_TRUE(waits);
    EXPECT_NE(waits->find("is forbidden (HTTP 403)"), std::string::npos)
        << "what the node says while it waits names the refusal: " << *waits;
    auto events = api.objects(kubeapi::events_resource(), "default");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].value("type", ""), "Warning");
    EXPECT_EQ(events[0].value("reason", ""), model::k_write_refused);
    EXPECT_EQ(events[0]["regarding"].value("name", ""), "refused-here");

    ASSERT_TRUE(keeper.renew(held)) << "accepted again";
    events = api.objects(kubeapi::events_resource(), "default");
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(std::ranges::count_if(events,
                                    [](const json& event) {
                                        return event.value("reason", "") == model::k_write_accepted;
                                    }),
              1);
}

} // namespace cluster_slot_keeper
} // namespace
} // namespace shimkeeper::cluster::agent
