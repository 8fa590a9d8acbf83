// What of a Shim wakes every agent's reconcile (cluster_watch.hpp): the coordinator's status
// writes must not, except the one that resolves a percentage into this generation's slot count.
#include "shimkeeper/cluster/agent/cluster_watch.hpp"
#include "unit/cluster_fixtures.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {
namespace cluster_shim_fingerprint {

using namespace fixtures;

json rolling(json max_update) {
    json shim = shim_object("demo", 3, k_sha_a);
    shim["metadata"]["uid"] = "u-demo";
    shim["spec"]["rolloutStrategy"] = {{"type", "rolling"},
                                       {"rolling", {{"maxUpdate", max_update}}}};
    return shim;
}

json with_status(json shim, long observed, long slots) {
    shim["status"]["observedGeneration"] = observed;
    shim["status"]["slots"] = slots;
    shim["status"]["conditions"] = json::array({{{"type", "Progressing"}, {"status", "True"}}});
    return shim;
}

TEST(ClusterShimFingerprint, TheCoordinatorsStatusOfANumberedRolloutWakesNoAgent) {
    const json applied = rolling(50);
    EXPECT_EQ(shim_fingerprint(applied), shim_fingerprint(with_status(applied, 3, 50)));
    EXPECT_EQ(shim_fingerprint(with_status(applied, 3, 50)),
              shim_fingerprint(with_status(applied, 3, 7)));
}

TEST(ClusterShimFingerprint, APercentageResolvedForThisGenerationWakesTheAgents) {
    const json applied = rolling("25%");
    // Resolved for the last generation only: the same number, still not this generation's.
    const json stale = with_status(applied, 2, 2);
    const json resolved = with_status(applied, 3, 2);
    EXPECT_NE(shim_fingerprint(stale), shim_fingerprint(resolved));
    EXPECT_NE(shim_fingerprint(resolved), shim_fingerprint(with_status(applied, 3, 4)));
}

TEST(ClusterShimFingerprint, ANewGenerationOrADeletionWakesTheAgents) {
    const json applied = rolling(50);
    json next = applied;
    next["metadata"]["generation"] = 4;
    EXPECT_NE(shim_fingerprint(applied), shim_fingerprint(next));
    json deleting = applied;
    deleting["metadata"]["deletionTimestamp"] = "2026-11-27T21:00:00Z";
    EXPECT_NE(shim_fingerprint(applied), shim_fingerprint(deleting));
}

} // namespace cluster_shim_fingerprint
} // namespace
} // namespace shimkeeper::cluster::agent
