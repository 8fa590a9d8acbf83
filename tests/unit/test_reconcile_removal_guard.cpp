// Which removals wait for pods: a shim the desired state drops waits while any
// sandbox, ready or not, was created with its handler; nothing else waits; a blocked shim is kept
// exactly as the current generation runs it.
#include "shimkeeper/reconcile/removal_guard.hpp"
#include "unit/cluster_fixtures.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {
namespace reconcile_removal_guard {

using namespace fixtures;
using reconcile::blocked_removals;
using reconcile::keep_blocked;

health::PodSandboxInfo pod(std::string name, std::string handler, bool ready = true) {
    return {name + "-id", name, "team", std::move(handler), ready};
}

TEST(RemovalGuard, ADroppedShimWhoseHandlerAPodUsesWaitsNamingThePods) {
    const auto demo = spec_of(shim_object("demo", 1, k_sha_a));
    const auto other = spec_of(shim_object("other", 1, k_sha_b));
    const auto state = state_with({demo, other});
    const auto blocked = blocked_removals(
        {other}, state,
        {pod("web", demo.handler), pod("old", demo.handler, false), pod("plain", "")});
    ASSERT_EQ(blocked.size(), 1u);
    EXPECT_EQ(blocked.at("demo").pods, 2u); // the NOTREADY sandbox counts too
    EXPECT_EQ(blocked.at("demo").reason,
              "blocked by 2 pod(s) on handler " + demo.handler + ": team/web, team/old");
}

TEST(RemovalGuard, NothingWaitsWithoutPodsOnTheHandlerOrWhenTheShimStays) {
    const auto demo = spec_of(shim_object("demo", 1, k_sha_a));
    const auto state = state_with({demo});
    EXPECT_TRUE(blocked_removals({}, state, {pod("plain", "runc")}).empty());
    EXPECT_TRUE(blocked_removals({demo}, state, {pod("web", demo.handler)}).empty());
    EXPECT_TRUE(blocked_removals({}, store::StoreState{}, {pod("web", demo.handler)}).empty());
}

TEST(RemovalGuard, ABlockedShimIsKeptAsTheCurrentGenerationRunsIt) {
    const auto demo = spec_of(shim_object("demo", 1, k_sha_a));
    const auto state = state_with({demo});
    const auto blocked = blocked_removals({}, state, {pod("web", demo.handler)});
    const auto kept = keep_blocked(spec::DesiredShims{}, state, blocked);
    ASSERT_TRUE(kept.has_value()) << kept.error().message();
    ASSERT_EQ(kept->shims.size(), 1u);
    EXPECT_EQ(kept->shims[0].name, "demo");
    EXPECT_EQ(kept->shims[0].handler, demo.handler);
    EXPECT_EQ(kept->shims[0].location.file, state.current_generation()->shims[0].origin);
}

} // namespace reconcile_removal_guard
} // namespace
} // namespace shimkeeper::cluster::agent
