// What a coordinator term remembers of its grants between passes (grant_book.hpp), and which
// generations it may grant for (grant_targets.hpp): the outcome checked is who gets a slot next.
#include "shimkeeper/cluster/model/grant_book.hpp"
#include "shimkeeper/cluster/model/grant_targets.hpp"
#include "shimkeeper/cluster/model/slot_timing.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_grant_book {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const RolloutTarget k_spin{"spin", "u-1", 3, 1};

json rolling_shim(long generation = 3) {
    return {
        {"metadata", {{"name", "spin"}, {"uid", "u-1"}, {"generation", generation}}},
        {"spec", {{"rolloutStrategy", {{"type", "rolling"}, {"rolling", {{"maxUpdate", 1}}}}}}}};
}

SlotSeen held_slot(const std::string& holder, const std::string& failed = "") {
    json lease = slot_lease_for(k_spin, 0, holder, "2026-11-30T01:00:00.000000Z");
    lease["metadata"]["uid"] = "grant-" + holder;
    if (!failed.empty()) {
        lease["metadata"]["annotations"][k_slot_failed_key] = failed;
    }
    return {slot_lease_of(lease), Clock::now()};
}

std::map<std::string, SlotRequests> asking(const std::vector<std::string>& nodes,
                                           const std::string& since = "t1") {
    std::map<std::string, SlotRequests> out;
    for (const std::string& node : nodes) {
        out[node] = {{"spin", SlotRequest{k_spin.uid, k_spin.generation, since}}};
    }
    return out;
}

// Who the book lets the planner grant the one slot of Shim/spin to now.
std::vector<std::string> next_granted(const GrantBook& book, const std::vector<SlotSeen>& slots,
                                      const std::map<std::string, SlotRequests>& requests) {
    std::vector<std::string> out;
    for (const SlotGrant& grant : plan_slot_grants({{k_spin, false}}, slots, requests,
                                                   book.pending_grants(), book.served())) {
        out.push_back(grant.node);
    }
    return out;
}

const std::string k_name = slot_lease_name("spin", 0);

TEST(ClusterGrantBook, AGrantStaysMadeUntilTheWatchShowsItsLease) {
    GrantBook book;
    const auto requests = asking({"node-a", "node-b"});
    const auto now = Clock::now();
    ASSERT_EQ(next_granted(book, {}, requests), std::vector<std::string>{"node-a"});
    book.record_grant({k_spin, 0, "node-a"}, requests.at("node-a").at("spin"), {{k_name, 4}}, now);

    // The watch has not shown the create yet: the slot is not free for node-b.
    book.settle({}, {{k_name, 4}}, requests, now + milliseconds(50));
    EXPECT_TRUE(next_granted(book, {}, requests).empty());

    // It has (taken and released already): node-a's request is served, node-b is next.
    book.settle({}, {{k_name, 6}}, requests, now + milliseconds(100));
    EXPECT_TRUE(book.pending_grants().empty());
    EXPECT_EQ(next_granted(book, {}, requests), std::vector<std::string>{"node-b"});
}

TEST(ClusterGrantBook, AGrantTheWatchNeverShowsCountsForALeaseAtMost) {
    GrantBook book;
    const auto requests = asking({"node-a", "node-b"});
    const auto now = Clock::now();
    book.record_grant({k_spin, 0, "node-a"}, requests.at("node-a").at("spin"), {}, now);
    EXPECT_EQ(book.next_pending_expiry(), now + slot_timing::free_after);

    book.settle({}, {}, requests, now + slot_timing::free_after);
    EXPECT_EQ(book.pending_grants().size(), 1u) << "not before a whole lease";
    book.settle({}, {}, requests, now + slot_timing::free_after + milliseconds(1));
    EXPECT_TRUE(book.pending_grants().empty());
    EXPECT_FALSE(book.next_pending_expiry());
    EXPECT_EQ(next_granted(book, {}, requests), std::vector<std::string>{"node-b"})
        << "node-a never took it: its request is served";
}

TEST(ClusterGrantBook, AHeldGrantIsNotServedAndAServedRequestIsForgottenWhenAskedAnew) {
    GrantBook book;
    auto requests = asking({"node-a"});
    const auto now = Clock::now();
    book.record_grant({k_spin, 0, "node-a"}, requests.at("node-a").at("spin"), {}, now);
    book.settle({held_slot("node-a")}, {{k_name, 1}}, requests, now);
    EXPECT_TRUE(book.served().empty()) << "node-a still holds it";

    book.settle({}, {{k_name, 2}}, requests, now);
    ASSERT_EQ(book.served().size(), 1u);
    EXPECT_TRUE(next_granted(book, {}, requests).empty()) << "the same request is not served twice";

    requests = asking({"node-a"}, "t2"); // its daemon waits again
    book.settle({}, {{k_name, 2}}, requests, now);
    EXPECT_TRUE(book.served().empty());
    EXPECT_EQ(next_granted(book, {}, requests), std::vector<std::string>{"node-a"});

    book.record_grant({k_spin, 0, "node-a"}, requests.at("node-a").at("spin"), {{k_name, 2}}, now);
    book.settle({}, {{k_name, 3}}, {}, now); // its slot went and it asks no more
    EXPECT_TRUE(book.served().empty()) << "nothing left to decline";
}

TEST(ClusterGrantBook, OnlyLiveGrantsAreRememberedAsSeen) {
    GrantBook book;
    SlotSeen released = held_slot("node-c");
    released.lease.holder.clear();
    book.note_slots_seen({held_slot("node-a"), held_slot("node-b", "boom"), released});
    EXPECT_EQ(book.grants_seen(), (std::map<std::string, std::string>{{"grant-node-a", "node-a"}}));
    book.note_slots_seen({}); // the slot went: the term still knows it was granted
    EXPECT_EQ(book.grants_seen().size(), 1u);
}

TEST(ClusterGrantTargets, AFailureNotRecordedYetHaltsItsGenerationOnly) {
    const std::map<std::string, json> shims{{"spin", rolling_shim()}};
    const auto targets = grant_targets(shims, {}, {}, {});
    ASSERT_EQ(targets.size(), 1u);
    EXPECT_FALSE(targets[0].halted);
    EXPECT_EQ(targets[0].target.slots, 1);

    SlotHold failing{"spin", k_name, "grant-node-a", "u-1", 3};
    failing.failed = "health check failed";
    EXPECT_TRUE(grant_targets(shims, {}, {}, {failing})[0].halted);
    failing.generation = 2;
    EXPECT_FALSE(grant_targets(shims, {}, {}, {failing})[0].halted) << "an older generation's";

    EXPECT_EQ(grant_targets(shims, {}, {}, {}, {.grant_over_max = true})[0].target.slots, 2);
    failing.generation = 3;
    EXPECT_FALSE(grant_targets(shims, {}, {}, {failing}, {.halt_ignored = true})[0].halted);
}

TEST(ClusterGrantTargets, OnlyRollingShimsAreTargets) {
    json recreate = rolling_shim();
    recreate["spec"]["rolloutStrategy"] = {{"type", "recreate"}};
    json malformed = rolling_shim();
    malformed["spec"]["rolloutStrategy"] = "fast";
    EXPECT_TRUE(grant_targets({{"spin", recreate}, {"bad", malformed}}, {}, {}, {}).empty());
}

} // namespace cluster_grant_book
} // namespace
} // namespace shimkeeper::cluster::model
