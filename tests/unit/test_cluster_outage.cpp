// An API server that does not answer and one that refuses the credential are both
// ridden out on the last reading; what the node says of each (the log, status) and what the store
// keeps of it (since when) must tell them apart and name the file to renew. Since when an outage
// runs is decided by one rule for a load's reading and a settled pass alike.
#include "shimkeeper/cluster/agent/cluster_memory.hpp"
#include "shimkeeper/cluster/agent/cluster_outage.hpp"
#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {
namespace cluster_outage {

class ClusterOutage : public testing::TempDirTest {};

ClusterReading outage_reading() {
    ClusterReading reading;
    reading.live = false;
    reading.view.read_at = "2026-11-26T10:00:00Z";
    reading.view.unreachable_since = "2026-11-26T11:00:00Z";
    return reading;
}

TEST_F(ClusterOutage, ALiveReadingHasNoOutage) {
    EXPECT_EQ(ClusterReading{}.outage(), "");
}

TEST_F(ClusterOutage, AnUnansweredReadSaysSinceWhen) {
    ClusterReading reading = outage_reading();
    reading.problem = "GET /api/v1/nodes/a: Timeout was reached";
    EXPECT_EQ(reading.outage(), "unreachable since 2026-11-26T11:00:00Z (GET /api/v1/nodes/a: "
                                "Timeout was reached): keeping the Shims read at "
                                "2026-11-26T10:00:00Z");
}

TEST_F(ClusterOutage, ARefusedCredentialSaysSinceWhenAndWhatToRenew) {
    ClusterReading reading = outage_reading();
    reading.refused = true;
    reading.view.refused_since = "2026-11-26T12:00:00Z";
    reading.renew = "/etc/shimkeeper/token";
    reading.problem = "GET /api/v1/nodes/a: Unauthorized (HTTP 401 Unauthorized)";
    EXPECT_EQ(reading.outage(), "credentials refused since 2026-11-26T12:00:00Z (GET "
                                "/api/v1/nodes/a: Unauthorized (HTTP 401 Unauthorized)): renew "
                                "/etc/shimkeeper/token; keeping the Shims read at "
                                "2026-11-26T10:00:00Z");
}

TEST_F(ClusterOutage, TheMemoryKeepsSinceWhenTheCredentialWasRefused) {
    const ClusterMemory memory(m_dir / "state" / "cluster.json");
    ClusterSnapshot view;
    view.node = {{"metadata", {{"name", "a"}}}};
    view.read_at = "2026-11-26T10:00:00Z";
    view.unreachable_since = "2026-11-26T11:00:00Z";
    view.refused_since = "2026-11-26T12:00:00Z";
    ASSERT_TRUE(memory.save(view));
    auto loaded = memory.load();
    ASSERT_TRUE(loaded && *loaded);
    EXPECT_EQ((*loaded)->unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ((*loaded)->refused_since, "2026-11-26T12:00:00Z");
    EXPECT_TRUE((*loaded)->same_objects(view));
}

ClusterSnapshot kept_outage(std::string unreachable_since, std::string refused_since) {
    ClusterSnapshot kept;
    kept.read_at = "2026-11-26T10:00:00Z";
    kept.unreachable_since = std::move(unreachable_since);
    kept.refused_since = std::move(refused_since);
    return kept;
}

TEST_F(ClusterOutage, OnlyNoAnswerAndARefusedCredentialAreOutages) {
    EXPECT_EQ(outage_of(util::Error(util::ErrorCode::network, "GET: Timeout was reached")),
              ApiAnswer::unanswered);
    EXPECT_EQ(outage_of(util::Error(util::ErrorCode::refused, "GET: Unauthorized")),
              ApiAnswer::refused);
    // A missing Node or a bad answer is a mistake to fix, not an outage to ride out.
    EXPECT_EQ(outage_of(util::Error(util::ErrorCode::not_found, "Node a not found")), std::nullopt);
    EXPECT_EQ(outage_of(util::Error(util::ErrorCode::invalid_input, "not JSON")), std::nullopt);
}

TEST_F(ClusterOutage, TheFirstUnansweredRequestStartsTheOutageAndLaterOnesKeepItsStart) {
    ClusterSnapshot kept = kept_outage("", "");
    EXPECT_TRUE(update_outage_since(kept, ApiAnswer::unanswered, "2026-11-26T11:00:00Z"));
    EXPECT_EQ(kept.unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ(kept.refused_since, "");
    EXPECT_FALSE(update_outage_since(kept, ApiAnswer::unanswered, "2026-11-26T12:00:00Z"));
    EXPECT_EQ(kept.unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ(kept.read_at, "2026-11-26T10:00:00Z");
}

TEST_F(ClusterOutage, ARefusalStartsBothSinceWhensUnlessAnOutageRunsAlready) {
    ClusterSnapshot fresh = kept_outage("", "");
    EXPECT_TRUE(update_outage_since(fresh, ApiAnswer::refused, "2026-11-26T11:00:00Z"));
    EXPECT_EQ(fresh.unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ(fresh.refused_since, "2026-11-26T11:00:00Z");

    ClusterSnapshot unreachable = kept_outage("2026-11-26T11:00:00Z", "");
    EXPECT_TRUE(update_outage_since(unreachable, ApiAnswer::refused, "2026-11-26T12:00:00Z"));
    EXPECT_EQ(unreachable.unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ(unreachable.refused_since, "2026-11-26T12:00:00Z");
    EXPECT_FALSE(update_outage_since(unreachable, ApiAnswer::refused, "2026-11-26T13:00:00Z"));
    EXPECT_EQ(unreachable.refused_since, "2026-11-26T12:00:00Z");
}

TEST_F(ClusterOutage, NoAnswerAfterRefusalsEndsTheRefusalsButNotTheOutage) {
    ClusterSnapshot kept = kept_outage("2026-11-26T11:00:00Z", "2026-11-26T12:00:00Z");
    EXPECT_TRUE(update_outage_since(kept, ApiAnswer::unanswered, "2026-11-26T13:00:00Z"));
    EXPECT_EQ(kept.unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ(kept.refused_since, "");
}

TEST_F(ClusterOutage, AnAnsweredRequestEndsTheOutage) {
    ClusterSnapshot kept = kept_outage("2026-11-26T11:00:00Z", "2026-11-26T12:00:00Z");
    EXPECT_TRUE(update_outage_since(kept, ApiAnswer::answered, "2026-11-26T13:00:00Z"));
    EXPECT_EQ(kept.unreachable_since, "");
    EXPECT_EQ(kept.refused_since, "");
    EXPECT_FALSE(update_outage_since(kept, ApiAnswer::answered, "2026-11-26T14:00:00Z"));
}

TEST_F(ClusterOutage, WhatProvesNothingLeavesTheOutageAsItIs) {
    ClusterSnapshot kept = kept_outage("2026-11-26T11:00:00Z", "2026-11-26T12:00:00Z");
    EXPECT_FALSE(update_outage_since(kept, ApiAnswer::unproven, "2026-11-26T13:00:00Z"));
    EXPECT_EQ(kept.unreachable_since, "2026-11-26T11:00:00Z");
    EXPECT_EQ(kept.refused_since, "2026-11-26T12:00:00Z");
    ClusterSnapshot none = kept_outage("", "");
    EXPECT_FALSE(update_outage_since(none, ApiAnswer::unproven, "2026-11-26T13:00:00Z"));
    EXPECT_EQ(none.unreachable_since, "");
}

} // namespace cluster_outage
} // namespace
} // namespace shimkeeper::cluster::agent
