// The election's rules (leader_election.hpp) against the in-memory API server: who holds the
// Lease after each round, with `now` given so that expiry is decided without waiting.
#include "fake_api_client.hpp"
#include "shimkeeper/kubeapi/leader_election.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::kubeapi {
namespace {
namespace kubeapi_leader_election {

using nlohmann::json;
using std::chrono::seconds;
using Clock = LeaderElector::Clock;

const std::string k_ns = "shimkeeper";
const std::string k_lease = "shimkeeper-coordinator";

LeaseSettings settings_for(const std::string& identity) {
    return {k_ns, k_lease, identity, seconds(15), seconds(10), seconds(2)};
}

json lease_held_by(const std::string& holder, long duration_seconds = 15) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", k_lease}}},
            {"spec",
             {{"holderIdentity", holder},
              {"leaseDurationSeconds", duration_seconds},
              {"acquireTime", "2026-11-30T01:00:00.000000Z"},
              {"renewTime", "2026-11-30T01:00:00.000000Z"},
              {"leaseTransitions", 3}}}};
}

json spec_of(const FakeApiClient& api) {
    auto lease = api.find(leases_resource(), k_ns, k_lease);
    EXPECT_TRUE(lease.has_value()) << "the Lease should exist";
    return lease ? lease->value("spec", json::object()) : json::object();
}

TEST(KubeapiLeaderElection, AnAbsentLeaseIsCreatedNamingTheCandidate) {
    FakeApiClient api;
    LeaderElector elector(settings_for("node-a"));
    const auto t0 = Clock::now();
    ASSERT_EQ(elector.try_acquire_or_renew(api, t0), true);
    const json spec = spec_of(api);
    EXPECT_EQ(spec.value("holderIdentity", ""), "node-a");
    EXPECT_EQ(spec.value("leaseDurationSeconds", 0), 15);
    EXPECT_EQ(spec.value("leaseTransitions", -1), 0);
    EXPECT_TRUE(elector.is_leader(t0 + seconds(9)));
    EXPECT_FALSE(elector.is_leader(t0 + seconds(10))) << "leading ends at the renew deadline";
}

TEST(KubeapiLeaderElection, ALeaseAnotherRenewedRecentlyIsNotTaken) {
    FakeApiClient api;
    api.put(leases_resource(), k_ns, lease_held_by("node-b"));
    LeaderElector elector(settings_for("node-a"));
    const auto t0 = Clock::now();
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0), false);
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(14)), false);
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-b");
    EXPECT_TRUE(api.calls_of("merge_patch").empty()) << "a held lease is not written";
    EXPECT_EQ(elector.observed_holder(), "node-b");
    EXPECT_FALSE(elector.is_leader(t0 + seconds(14)));
}

TEST(KubeapiLeaderElection, ALeaseNotRenewedForItsDurationOnOurClockIsTakenOver) {
    FakeApiClient api;
    api.put(leases_resource(), k_ns, lease_held_by("node-b"));
    LeaderElector elector(settings_for("node-a"));
    const auto t0 = Clock::now();
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0), false); // first seen now: runs from here
    ASSERT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(15)), true);
    const json spec = spec_of(api);
    EXPECT_EQ(spec.value("holderIdentity", ""), "node-a");
    EXPECT_EQ(spec.value("leaseTransitions", 0), 4) << "a new holder counts a transition";
    EXPECT_NE(spec.value("acquireTime", ""), "2026-11-30T01:00:00.000000Z");
    EXPECT_TRUE(elector.is_leader(t0 + seconds(15)));
}

TEST(KubeapiLeaderElection, AHolderThatRenewsMeanwhileKeepsTheLease) {
    FakeApiClient api;
    api.put(leases_resource(), k_ns, lease_held_by("node-b"));
    LeaderElector elector(settings_for("node-a"));
    const auto t0 = Clock::now();
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0), false);
    // node-b renews at t0 + 10 s: its lease runs anew from when node-a sees that.
    json renewed = *api.find(leases_resource(), k_ns, k_lease);
    renewed["spec"]["renewTime"] = "2026-11-30T01:00:10.000000Z";
    api.put(leases_resource(), k_ns, renewed);
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(10)), false);
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(20)), false);
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-b");
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(25)), true);
}

TEST(KubeapiLeaderElection, AVacantLeaseIsTakenAtOnce) {
    FakeApiClient api;
    api.put(leases_resource(), k_ns, lease_held_by("", 1));
    LeaderElector elector(settings_for("node-a"));
    EXPECT_EQ(elector.try_acquire_or_renew(api, Clock::now()), true);
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-a");
}

TEST(KubeapiLeaderElection, TheLeaderRenewsItsOwnLeaseWithoutATransition) {
    FakeApiClient api;
    LeaderElector elector(settings_for("node-a"));
    const auto t0 = Clock::now();
    ASSERT_EQ(elector.try_acquire_or_renew(api, t0), true);
    const std::string version = api.find(leases_resource(), k_ns, k_lease)
                                    ->value("metadata", json::object())
                                    .value("resourceVersion", "");
    ASSERT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(8)), true);
    const json lease = *api.find(leases_resource(), k_ns, k_lease);
    EXPECT_NE(lease["metadata"].value("resourceVersion", ""), version) << "written again";
    EXPECT_EQ(lease["spec"].value("holderIdentity", ""), "node-a");
    EXPECT_EQ(lease["spec"].value("leaseTransitions", -1), 0);
    EXPECT_EQ(api.calls_of("merge_patch", "leases").size(), 1u) << "renewed by a patch";
    EXPECT_TRUE(api.calls_of("update").empty()) << "never by a PUT (its priority level)";
    EXPECT_TRUE(elector.is_leader(t0 + seconds(17))) << "the renew deadline runs from the renewal";
}

TEST(KubeapiLeaderElection, OfTwoCandidatesOnlyOneLeads) {
    FakeApiClient api;
    LeaderElector a(settings_for("node-a"));
    LeaderElector b(settings_for("node-b"));
    const auto t0 = Clock::now();
    EXPECT_EQ(a.try_acquire_or_renew(api, t0), true);
    EXPECT_EQ(b.try_acquire_or_renew(api, t0), false);
    EXPECT_EQ(a.try_acquire_or_renew(api, t0 + seconds(2)), true);
    EXPECT_EQ(b.try_acquire_or_renew(api, t0 + seconds(14)), false);
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-a");
}

TEST(KubeapiLeaderElection, AWatchedLeaderWhoseCopyIsStaleReadsAgainAndRenews) {
    FakeApiClient api;
    LeaderElector elector(settings_for("node-a"));
    elector.observe(std::nullopt);
    const auto t0 = Clock::now();
    ASSERT_EQ(elector.try_acquire_or_renew(api, t0), true);
    // Someone else's write (a label, say) moves the version: the leader's copy is stale.
    ASSERT_TRUE(api.merge_patch(leases_resource(), k_ns, k_lease,
                                {{"metadata", {{"labels", {{"touched", "yes"}}}}}}));
    api.clear_calls();
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(2)), true);
    EXPECT_EQ(api.calls(), (std::vector<FakeApiClient::Call>{{"merge_patch", "leases", k_lease},
                                                             {"get", "leases", k_lease},
                                                             {"merge_patch", "leases", k_lease}}));
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-a");
    EXPECT_EQ(spec_of(api).value("leaseTransitions", -1), 0) << "still the same term";
}

TEST(KubeapiLeaderElection, AfterARenewalWithNoAnswerTheLeaderReadsBeforeWriting) {
    FakeApiClient api;
    LeaderElector elector(settings_for("node-a"));
    elector.observe(std::nullopt);
    const auto t0 = Clock::now();
    ASSERT_EQ(elector.try_acquire_or_renew(api, t0), true);
    api.fail_next("merge_patch", "leases", util::Error(util::ErrorCode::network, "timed out"));
    const auto timed_out = elector.try_acquire_or_renew(api, t0 + seconds(2));
    ASSERT_FALSE(timed_out);
    EXPECT_EQ(timed_out.error().code(), util::ErrorCode::network);
    api.clear_calls();
    EXPECT_EQ(elector.try_acquire_or_renew(api, t0 + seconds(4)), true);
    EXPECT_EQ(api.calls(), (std::vector<FakeApiClient::Call>{{"get", "leases", k_lease},
                                                             {"merge_patch", "leases", k_lease}}))
        << "the unanswered write may have moved the version: read it, then write once";
}

TEST(KubeapiLeaderElection, ACandidateWithAStaleVersionDoesNotOverwriteTheWinner) {
    FakeApiClient api;
    api.put(leases_resource(), k_ns, lease_held_by("", 1)); // vacant: released
    LeaderElector a(settings_for("node-a"));
    LeaderElector b(settings_for("node-b"));
    a.observe(api.find(leases_resource(), k_ns, k_lease));
    b.observe(api.find(leases_resource(), k_ns, k_lease));
    const auto t0 = Clock::now();
    EXPECT_EQ(a.try_acquire_or_renew(api, t0), true);
    EXPECT_EQ(b.try_acquire_or_renew(api, t0), false)
        << "b's copy is the vacant version a wrote over: its patch carries it and gets 409";
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-a");
}

TEST(KubeapiLeaderElection, AnUnansweredReadIsAnErrorAndNoLeadership) {
    FakeApiClient api;
    api.fail_next("get", "leases", util::Error(util::ErrorCode::network, "HTTP 503"));
    LeaderElector elector(settings_for("node-a"));
    const auto held = elector.try_acquire_or_renew(api, Clock::now());
    ASSERT_FALSE(held);
    EXPECT_EQ(held.error().code(), util::ErrorCode::network);
    EXPECT_FALSE(elector.is_leader());
    EXPECT_FALSE(api.find(leases_resource(), k_ns, k_lease)) << "nothing created";
}

TEST(KubeapiLeaderElection, ReleaseClearsTheHolderAndShortensTheLease) {
    FakeApiClient api;
    LeaderElector elector(settings_for("node-a"));
    ASSERT_EQ(elector.try_acquire_or_renew(api, Clock::now()), true);
    ASSERT_TRUE(elector.release(api));
    const json spec = spec_of(api);
    EXPECT_EQ(spec.value("holderIdentity", "x"), "");
    EXPECT_EQ(spec.value("leaseDurationSeconds", 0), 1);
    EXPECT_FALSE(elector.is_leader());

    LeaderElector next(settings_for("node-b"));
    EXPECT_EQ(next.try_acquire_or_renew(api, Clock::now()), true) << "taken over at once";
}

TEST(KubeapiLeaderElection, ReleaseLeavesALeaseAnotherHoldsAndAsksNothingWhenNotLeading) {
    FakeApiClient api;
    LeaderElector idle(settings_for("node-c"));
    ASSERT_TRUE(idle.release(api));
    EXPECT_TRUE(api.calls().empty()) << "never led: nothing to give up";

    LeaderElector elector(settings_for("node-a"));
    ASSERT_EQ(elector.try_acquire_or_renew(api, Clock::now()), true);
    api.put(leases_resource(), k_ns, lease_held_by("node-b")); // taken over meanwhile
    ASSERT_TRUE(elector.release(api));
    EXPECT_EQ(spec_of(api).value("holderIdentity", ""), "node-b");
}

} // namespace kubeapi_leader_election
} // namespace
} // namespace shimkeeper::kubeapi
