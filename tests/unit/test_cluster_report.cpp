// What the node's own Node is told around a transaction, decided from the reading, the desired
// shims and the store: the label only for a Shim the node runs exactly, `failed` with the reason
// otherwise, `conflict` where a file won, nothing for Shims that do not select the node, and the
// label off before a cluster shim is removed.
#include "shimkeeper/cluster/agent/cluster_report.hpp"
#include "unit/cluster_fixtures.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::agent {
namespace {
namespace cluster_report {

using model::ShimState;
using nlohmann::json;
using namespace fixtures;

TEST(ClusterReport, ASelectedShimTheNodeRunsIsInstalledAtItsGeneration) {
    const json demo = shim_object("demo", 2, k_sha_a);
    ClusterReading reading;
    reading.shims = {on_node(demo, true), on_node(shim_object("other", 1, k_sha_b), false)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(demo)};
    const auto report =
        report_after(reading, desired, {}, state_with(desired.shims), reconcile::Restart::yes);
    ASSERT_TRUE(report.wanted.contains("demo"));
    EXPECT_EQ(report.wanted.at("demo").state, model::ShimState::installed);
    EXPECT_EQ(report.wanted.at("demo").generation, 2);
    // Labelled with the handler the transaction proved containerd serves.
    EXPECT_EQ(report.wanted.at("demo").handler, desired.shims[0].handler);
    EXPECT_TRUE(report.wanted.at("demo").labelled());
    EXPECT_FALSE(report.wanted.contains("other")); // not selected: nothing said, keys forgotten
    EXPECT_NE(std::ranges::find(report.forget, "other"), report.forget.end());
}

TEST(ClusterReport, AFailedUpgradeIsFailedWithTheReasonEvenThoughTheOldOneRuns) {
    const json old_demo = shim_object("demo", 2, k_sha_a);
    const json new_demo = shim_object("demo", 3, k_sha_b);
    ClusterReading reading;
    reading.shims = {on_node(new_demo, true)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(new_demo)};
    TxnSummary txn;
    txn.reason = "containerd did not become healthy";
    txn.touched = {"demo"};
    const auto report = report_after(reading, desired, txn, state_with({spec_of(old_demo)}),
                                     reconcile::Restart::yes);
    EXPECT_EQ(report.wanted.at("demo").state, model::ShimState::failed);
    EXPECT_EQ(report.wanted.at("demo").reason, "containerd did not become healthy");
    EXPECT_FALSE(report.wanted.at("demo").labelled());
}

TEST(ClusterReport, AShimAFileWonIsAConflictNamingTheFile) {
    const json demo = shim_object("demo", 1, k_sha_a);
    ClusterReading reading;
    reading.shims = {on_node(demo, true)};
    spec::DesiredShims desired; // the file's demo, not the Shim's
    desired.warnings = {"Shim/demo@7 left out: shims.d/demo.toml defines demo too; the node's "
                        "own file wins"};
    const auto report =
        report_after(reading, desired, {}, store::StoreState{}, reconcile::Restart::yes);
    EXPECT_EQ(report.wanted.at("demo").state, model::ShimState::conflict);
    EXPECT_NE(report.wanted.at("demo").reason.find("shims.d/demo.toml"), std::string::npos);
}

TEST(ClusterReport, NoRestartIsInstallingNotInstalled) {
    const json demo = shim_object("demo", 1, k_sha_a);
    ClusterReading reading;
    reading.shims = {on_node(demo, true)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(demo)};
    TxnSummary txn;
    txn.touched = {"demo"};
    const auto report =
        report_after(reading, desired, txn, state_with(desired.shims), reconcile::Restart::no);
    EXPECT_EQ(report.wanted.at("demo").state, model::ShimState::installing);
}

TEST(ClusterReport, TheLabelGoesBeforeADeselectedShimIsRemoved) {
    const json demo = shim_object("demo", 1, k_sha_a);
    ClusterReading reading;
    reading.shims = {on_node(demo, false)};
    reconcile::NodePlan plan;
    reconcile::ShimAction remove;
    remove.kind = reconcile::ActionKind::remove;
    remove.name = "demo";
    plan.shims.actions = {remove};
    const auto report = report_before_change(reading, plan, state_with({spec_of(demo)}));
    ASSERT_TRUE(report.wanted.contains("demo"));
    EXPECT_EQ(report.wanted.at("demo").state, model::ShimState::removing);
    EXPECT_FALSE(report.wanted.at("demo").labelled());
}

// A label that cannot come off stops a change that leaves its handler unserved.
reconcile::NodePlan plan_of(reconcile::ActionKind kind, const std::string& handler) {
    reconcile::NodePlan plan;
    reconcile::ShimAction action;
    action.kind = kind;
    action.name = "demo";
    action.handler = handler;
    plan.shims.actions = {action};
    return plan;
}

ClusterReading labelled(const std::string& handler, bool selects) {
    ClusterReading reading;
    reading.shims = {on_node(shim_object("demo", 2, k_sha_b), selects)};
    reading.view.node = {
        {"metadata",
         {{"name", "node-a"}, {"labels", {{"shim.containerd.x-k8s.io/demo", handler}}}}}};
    return reading;
}

TEST(ClusterReport, AHandlerChangeWaitsForTheOldHandlersLabelToComeOff) {
    const auto plan = plan_of(reconcile::ActionKind::upgrade, "demo-new");
    const auto reading = labelled("demo-old", true);
    const auto before = report_before_change(reading, plan, store::StoreState{});
    EXPECT_EQ(labels_to_take_off_first(reading, plan, before),
              std::vector<std::string>{"changing demo from handler demo-old to handler demo-new"});
}

TEST(ClusterReport, AnUpgradeKeepingTheLabelledHandlerMayGoOnWithTheLabel) {
    const auto plan = plan_of(reconcile::ActionKind::upgrade, "demo-old");
    const auto reading = labelled("demo-old", true);
    const auto before = report_before_change(reading, plan, store::StoreState{});
    EXPECT_TRUE(labels_to_take_off_first(reading, plan, before).empty());
}

TEST(ClusterReport, AnInstallOnANodeWithoutTheLabelMayGoOn) {
    const auto plan = plan_of(reconcile::ActionKind::install, "demo-new");
    ClusterReading reading;
    reading.shims = {on_node(shim_object("demo", 2, k_sha_b), true)};
    const auto before = report_before_change(reading, plan, store::StoreState{});
    EXPECT_TRUE(labels_to_take_off_first(reading, plan, before).empty());
}

TEST(ClusterReport, AStaleLabelStopsAnInstallOfAnotherHandlerToo) {
    // The label outlived its shim (a report lost earlier): it still names a handler not served.
    const auto plan = plan_of(reconcile::ActionKind::install, "demo-new");
    const auto reading = labelled("demo-old", true);
    const auto before = report_before_change(reading, plan, store::StoreState{});
    EXPECT_EQ(labels_to_take_off_first(reading, plan, before).size(), 1U);
}

TEST(ClusterReport, ARemovalWaitsForTheLabelToComeOff) {
    const json demo = shim_object("demo", 1, k_sha_a);
    auto reading = labelled("demo", false);
    reading.shims = {on_node(demo, false)};
    const auto plan = plan_of(reconcile::ActionKind::remove, "demo");
    const auto before = report_before_change(reading, plan, state_with({spec_of(demo)}));
    EXPECT_EQ(labels_to_take_off_first(reading, plan, before),
              std::vector<std::string>{"removing demo"});
}

TEST(ClusterReport, ARemovalThatWaitsForPodsIsRemovingWithTheReasonAndNoLabel) {
    const json demo = shim_object("demo", 1, k_sha_a);
    ClusterReading reading;
    reading.shims = {on_node(demo, false)};
    spec::DesiredShims desired;
    desired.shims = {spec_of(demo)}; // kept by the removal guard
    const reconcile::BlockedRemovals blocked{
        {"demo", {"demo", 1, "blocked by 1 pod(s) on handler demo: team/web"}}};
    const auto report = report_after(reading, desired, {}, state_with(desired.shims),
                                     reconcile::Restart::yes, {}, blocked);
    ASSERT_TRUE(report.wanted.contains("demo"));
    EXPECT_EQ(report.wanted.at("demo").state, ShimState::removing);
    EXPECT_EQ(report.wanted.at("demo").reason, "blocked by 1 pod(s) on handler demo: team/web");
    EXPECT_FALSE(report.wanted.at("demo").labelled());
    EXPECT_TRUE(report.blocked.contains("demo")); // the reporter's RemovalBlocked Event
}

TEST(ClusterReport, AnInvalidSelectingShimIsFailedWithTheValidationError) {
    ClusterReading reading;
    auto bad = on_node(shim_object("demo", 5, "short"), true);
    bad.invalid = "Shim/demo: spec.fetchStrategy.anonHttp.sha256 is not 64 hex digits";
    reading.shims = {bad};
    const auto report = report_invalid(reading);
    EXPECT_EQ(report.wanted.at("demo").state, model::ShimState::failed);
    EXPECT_EQ(report.wanted.at("demo").generation, 5);
}

} // namespace cluster_report
} // namespace
} // namespace shimkeeper::cluster::agent
