#include "shimkeeper/reconcile/plan.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::reconcile {
namespace {

const std::string k_digest_a(64, 'a');
const std::string k_digest_b(64, 'b');

spec::ShimSpec want(const std::string& name, const std::string& digest) {
    spec::ShimSpec s;
    s.name = name;
    s.handler = name;
    s.runtime_type = "io.containerd." + name + ".v2";
    s.binary = "containerd-shim-" + name + "-v2";
    s.version = "1.0";
    s.fetch.url = "https://example.org/" + name + ".tar.gz";
    s.fetch.sha256 = digest;
    return s;
}

store::InstalledShim installed(const spec::ShimSpec& s, const std::string& digest) {
    return {s.name,   s.handler,   s.runtime_type,
            s.binary, s.binary,    s.version,
            digest,   s.fetch.url, options_fingerprint(s.options)};
}

TEST(ReconcilePlan, FirstRunInstallsEveryShim) {
    auto plan = compute_plan({want("spin", k_digest_a), want("slight", k_digest_b)}, nullptr, {});
    ASSERT_EQ(plan.actions.size(), 2u);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::install);
    EXPECT_EQ(plan.actions[1].kind, ActionKind::install);
    EXPECT_FALSE(plan.actions[0].staged);
    EXPECT_FALSE(plan.converged());
}

TEST(ReconcilePlan, ArtifactAlreadyInStoreIsMarkedStaged) {
    auto plan = compute_plan({want("spin", k_digest_a)}, nullptr, {k_digest_a});
    EXPECT_TRUE(plan.actions[0].staged);
}

TEST(ReconcilePlan, SameSpecAsCurrentGenerationIsUnchangedAndConverged) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "2026-01-01T00:00:00Z", {installed(spin, k_digest_a)}};
    auto plan = compute_plan({spin}, &gen, {k_digest_a});
    ASSERT_EQ(plan.actions.size(), 1u);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::unchanged);
    EXPECT_TRUE(plan.converged());
}

TEST(ReconcilePlan, NewDigestIsAnUpgradeWithBothDigests) {
    auto old_spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(old_spin, k_digest_a)}};
    auto new_spin = want("spin", k_digest_b);
    new_spin.version = "2.0";
    auto plan = compute_plan({new_spin}, &gen, {k_digest_a});
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].from_digest, k_digest_a);
    EXPECT_EQ(plan.actions[0].to_digest, k_digest_b);
    EXPECT_EQ(plan.actions[0].from_version, "1.0");
    EXPECT_EQ(plan.actions[0].to_version, "2.0");
    EXPECT_EQ(plan.actions[0].reasons, std::vector<std::string>{"new artifact"});
}

TEST(ReconcilePlan, ChangedOptionsAloneAreAnUpgrade) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.options.insert("SystemdCgroup", true);
    auto plan = compute_plan({spin}, &gen, {k_digest_a});
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].reasons, std::vector<std::string>{"options changed"});
}

TEST(ReconcilePlan, ChangedHandlerIsNamedInTheReasons) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.handler = "spin-next";
    auto plan = compute_plan({spin}, &gen, {k_digest_a});
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].reasons[0], "handler spin -> spin-next");
}

TEST(ReconcilePlan, ShimNoLongerDesiredIsRemovedAfterDesiredOnesInNameOrder) {
    auto keep = want("keep", k_digest_a);
    store::Generation gen{1,
                          "",
                          {installed(want("zeta", k_digest_b), k_digest_b),
                           installed(keep, k_digest_a),
                           installed(want("alpha", k_digest_b), k_digest_b)}};
    auto plan = compute_plan({keep}, &gen, {});
    ASSERT_EQ(plan.actions.size(), 3u);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::unchanged);
    EXPECT_EQ(plan.actions[1].kind, ActionKind::remove);
    EXPECT_EQ(plan.actions[1].name, "alpha");
    EXPECT_EQ(plan.actions[2].name, "zeta");
    EXPECT_EQ(plan.count(ActionKind::remove), 2u);
}

TEST(ReconcilePlan, UnverifiedShimIsUnchangedWhileItsUrlIsUnchanged) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.fetch.sha256.reset();
    spin.allow_unverified = true;
    EXPECT_EQ(compute_plan({spin}, &gen, {}).actions[0].kind, ActionKind::unchanged);
    spin.fetch.url = "https://example.org/other.tar.gz";
    auto plan = compute_plan({spin}, &gen, {});
    EXPECT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_TRUE(plan.actions[0].to_digest.empty());
}

TEST(ReconcilePlan, NothingDesiredAndNothingInstalledIsConverged) {
    EXPECT_TRUE(compute_plan({}, nullptr, {}).converged());
}

} // namespace
} // namespace shimkeeper::reconcile
