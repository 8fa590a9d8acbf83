// An API server that does not answer and one that refuses the credential are both
// ridden out on the last reading; what the node says of each (the log, status) and what the store
// keeps of it (since when) must tell them apart and name the file to renew.
#include "shimkeeper/cluster/agent/cluster_memory.hpp"
#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {

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

} // namespace
} // namespace shimkeeper::cluster::agent
