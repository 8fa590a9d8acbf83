#include "shimkeeper/reconcile/plan.hpp"

#include "shimkeeper/reconcile/record.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_plan {

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
    return record_of(s, digest, s.binary);
}

// What staging (or the store) knows: every artifact in store, or none.
std::vector<std::optional<KnownArtifact>> in_store(const std::vector<spec::ShimSpec>& shims) {
    std::vector<std::optional<KnownArtifact>> known;
    for (const auto& s : shims) {
        known.push_back(KnownArtifact{s.fetch.sha256.value_or(k_digest_a), s.binary});
    }
    return known;
}

std::vector<std::optional<KnownArtifact>> unknown(std::size_t count) {
    return std::vector<std::optional<KnownArtifact>>(count);
}

TEST(ReconcilePlan, FirstRunInstallsEveryShim) {
    auto plan =
        compute_plan({want("spin", k_digest_a), want("slight", k_digest_b)}, unknown(2), nullptr);
    ASSERT_EQ(plan.actions.size(), 2u);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::install);
    EXPECT_EQ(plan.actions[1].kind, ActionKind::install);
    EXPECT_FALSE(plan.actions[0].staged);
    EXPECT_TRUE(plan.new_generation);
}

TEST(ReconcilePlan, ArtifactAlreadyInStoreIsMarkedStaged) {
    auto spin = want("spin", k_digest_a);
    auto plan = compute_plan({spin}, in_store({spin}), nullptr);
    EXPECT_TRUE(plan.actions[0].staged);
}

TEST(ReconcilePlan, SameSpecAsCurrentGenerationIsUnchangedAndNoNewGeneration) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "2026-01-01T00:00:00Z", {installed(spin, k_digest_a)}};
    auto plan = compute_plan({spin}, in_store({spin}), &gen);
    ASSERT_EQ(plan.actions.size(), 1u);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::unchanged);
    EXPECT_FALSE(plan.new_generation);
}

TEST(ReconcilePlan, MovingAShimToAnotherFileIsNoChange) {
    auto spin = want("spin", k_digest_a);
    spin.location = {"shims.d/a.toml", 1, 1};
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.location = {"shims.d/b.toml", 4, 1};
    auto plan = compute_plan({spin}, in_store({spin}), &gen);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::unchanged);
    EXPECT_FALSE(plan.new_generation);
}

TEST(ReconcilePlan, NewDigestIsAnUpgradeWithBothDigests) {
    auto old_spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(old_spin, k_digest_a)}};
    auto new_spin = want("spin", k_digest_b);
    new_spin.version = "2.0";
    auto plan = compute_plan({new_spin}, unknown(1), &gen);
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].from_digest, k_digest_a);
    EXPECT_EQ(plan.actions[0].to_digest, k_digest_b);
    EXPECT_EQ(plan.actions[0].from_version, "1.0");
    EXPECT_EQ(plan.actions[0].to_version, "2.0");
    EXPECT_EQ(plan.actions[0].reasons,
              (std::vector<std::string>{"new artifact", "version 1.0 -> 2.0"}));
}

// Where plan and apply could disagree: a version-only change is recorded as a new generation.
TEST(ReconcilePlan, ChangedVersionAloneIsAnUpgradeAndANewGeneration) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.version = "1.1";
    auto plan = compute_plan({spin}, in_store({spin}), &gen);
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].reasons, std::vector<std::string>{"version 1.0 -> 1.1"});
    EXPECT_TRUE(plan.new_generation);
}

TEST(ReconcilePlan, ChangedOptionsAloneAreAnUpgrade) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.options.insert("SystemdCgroup", true);
    auto plan = compute_plan({spin}, in_store({spin}), &gen);
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].reasons, std::vector<std::string>{"options changed"});
}

TEST(ReconcilePlan, ChangedHandlerIsNamedInTheReasons) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.handler = "spin-next";
    auto plan = compute_plan({spin}, in_store({spin}), &gen);
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].reasons[0], "handler spin -> spin-next");
}

TEST(ReconcilePlan, AdoptAndRuntimeClassAreRecordedAndCompared) {
    auto spin = want("spin", k_digest_a);
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    spin.adopt = true;
    spin.runtime_class = spec::RuntimeClassSpec{"wasm"};
    auto plan = compute_plan({spin}, in_store({spin}), &gen);
    ASSERT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_EQ(plan.actions[0].reasons,
              (std::vector<std::string>{"adopt set", "runtime_class (none) -> wasm"}));
    EXPECT_TRUE(plan.target[0].adopt);
    EXPECT_EQ(plan.target[0].runtime_class, "wasm");
}

TEST(ReconcilePlan, ShimNoLongerDesiredIsRemovedAfterDesiredOnesInNameOrder) {
    auto keep = want("keep", k_digest_a);
    store::Generation gen{1,
                          "",
                          {installed(want("zeta", k_digest_b), k_digest_b),
                           installed(keep, k_digest_a),
                           installed(want("alpha", k_digest_b), k_digest_b)}};
    auto plan = compute_plan({keep}, in_store({keep}), &gen);
    ASSERT_EQ(plan.actions.size(), 3u);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::unchanged);
    EXPECT_EQ(plan.actions[1].kind, ActionKind::remove);
    EXPECT_EQ(plan.actions[1].name, "alpha");
    EXPECT_EQ(plan.actions[2].name, "zeta");
    EXPECT_EQ(plan.count(ActionKind::remove), 2u);
    EXPECT_TRUE(plan.new_generation);
    EXPECT_EQ(plan.target.size(), 1u);
}

TEST(ReconcilePlan, UnverifiedShimIsUnchangedWhileItsUrlIsUnchanged) {
    auto spin = want("spin", k_digest_a);
    spin.fetch.sha256.reset();
    spin.allow_unverified = true;
    store::Generation gen{1, "", {installed(spin, k_digest_a)}};
    EXPECT_EQ(compute_plan({spin}, unknown(1), &gen).actions[0].kind, ActionKind::unchanged);
    spin.fetch.url = "https://example.org/other.tar.gz";
    auto plan = compute_plan({spin}, unknown(1), &gen);
    EXPECT_EQ(plan.actions[0].kind, ActionKind::upgrade);
    EXPECT_TRUE(plan.actions[0].to_digest.empty());
}

TEST(ReconcilePlan, NothingDesiredAndNothingInstalledIsNoNewGeneration) {
    EXPECT_FALSE(compute_plan({}, {}, nullptr).new_generation);
}

TEST(ReconcileRecord, StoredGenerationGivesBackTheWholeSpec) {
    auto spin = want("spin", k_digest_a);
    spin.adopt = true;
    spin.allow_unverified = true;
    spin.runtime_class = spec::RuntimeClassSpec{"wasm"};
    spin.options.insert("SystemdCgroup", true);
    auto restored = spec_of(installed(spin, k_digest_a), 3);
    ASSERT_TRUE(restored) << restored.error().message();
    EXPECT_TRUE(restored->adopt);
    EXPECT_TRUE(restored->allow_unverified);
    ASSERT_TRUE(restored->runtime_class);
    EXPECT_EQ(restored->runtime_class->name, "wasm");
    EXPECT_EQ(restored->fetch.sha256, k_digest_a);
    EXPECT_TRUE(
        differences(record_of(*restored, k_digest_a, spin.binary), installed(spin, k_digest_a))
            .empty());
}

} // namespace reconcile_plan
} // namespace
} // namespace shimkeeper::reconcile
