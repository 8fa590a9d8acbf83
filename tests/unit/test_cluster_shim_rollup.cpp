// The coordinator's view of a Shim from the Nodes alone: counts, conditions, and a status written
// only when it would change.
#include "shimkeeper/cluster/model/shim_rollup.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_shim_rollup {

using nlohmann::json;

json shim(std::int64_t generation = 3) {
    return {{"metadata", {{"name", "spin"}, {"generation", generation}, {"uid", "u-1"}}},
            {"spec", {{"nodeSelector", {{"wasm", "true"}}}}}};
}

std::string annotation(const std::string& state, std::int64_t generation,
                       const std::string& reason = "") {
    return json{{"state", state}, {"generation", generation}, {"reason", reason}}.dump();
}

NodeView node(const std::string& name, std::map<std::string, std::string> labels,
              std::map<std::string, std::string> annotations = {}) {
    return {name, std::move(labels), std::move(annotations)};
}

NodeViews fleet() {
    const std::string key = "shim.containerd.x-k8s.io/spin";
    NodeViews nodes;
    for (NodeView view : {
             node("a", {{"wasm", "true"}, {key, "spin"}}, {{key, annotation("installed", 3)}}),
             node("b", {{"wasm", "true"}}, {{key, annotation("failed", 3, "sha256 mismatch")}}),
             node("c", {{"wasm", "true"}}, {{key, annotation("installing", 3)}}),
             // installed, but at the previous generation: still updating
             node("d", {{"wasm", "true"}, {key, "spin"}}, {{key, annotation("installed", 2)}}),
             // failed at the previous generation: has not tried this one yet
             node("e", {{"wasm", "true"}}, {{key, annotation("failed", 2, "old")}}),
             node("f", {{"other", "x"}}), // not selected
             // labelled but not selected any more (relabelled): carries the shim still
             node("g", {{key, "spin"}}),
         }) {
        nodes.emplace(view.name, view);
    }
    return nodes;
}

TEST(ClusterShimRollup, CountsSelectedInstalledFailedAndUpdatingAtTheCurrentGeneration) {
    Rollup result = rollup(shim(), fleet());
    EXPECT_EQ(result.generation, 3);
    EXPECT_EQ(result.counts, (NodeCounts{5, 1, 1, 3}));
    EXPECT_EQ(result.failures, std::vector<std::string>{"b (sha256 mismatch)"});
    EXPECT_EQ(result.carrying, (std::vector<std::string>{"a", "b", "c", "d", "e", "g"}));
    EXPECT_EQ(result.carrying_said.back(), "g (label only)");
}

TEST(ClusterShimRollup, InstalledNeedsTheLabelAsWellAsTheAnnotation) {
    const std::string key = "shim.containerd.x-k8s.io/spin";
    NodeViews nodes;
    nodes.emplace("a", node("a", {{"wasm", "true"}}, {{key, annotation("installed", 3)}}));
    nodes.emplace(
        "b", node("b", {{"wasm", "true"}, {key, "false"}}, {{key, annotation("installed", 3)}}));
    nodes.emplace("c", node("c", {{"wasm", "true"}, {key, "spin"}}, {{key, "not json"}}));
    EXPECT_EQ(rollup(shim(), nodes).counts, (NodeCounts{3, 0, 0, 3}));
}

TEST(ClusterShimRollup, InstalledNeedsTheLabelToNameTheShimsCurrentHandler) {
    const std::string key = "shim.containerd.x-k8s.io/spin";
    json moved = shim();
    moved["spec"]["handler"] = "spin-next";
    NodeViews nodes;
    // Still serving the handler of before (waiting for its slot): selected by no RuntimeClass
    // of this Shim, so not installed at it either.
    nodes.emplace(
        "a", node("a", {{"wasm", "true"}, {key, "spin"}}, {{key, annotation("installed", 3)}}));
    nodes.emplace("b", node("b", {{"wasm", "true"}, {key, "spin-next"}},
                            {{key, annotation("installed", 3)}}));
    EXPECT_EQ(rollup(moved, nodes).counts, (NodeCounts{2, 1, 0, 1}));
}

TEST(ClusterShimRollup, NoSelectorMeansEveryNodeButTheControlPlane) {
    json any = shim();
    any["spec"].erase("nodeSelector");
    NodeViews nodes;
    nodes.emplace("cp", node("cp", {{"node-role.kubernetes.io/control-plane", ""}}));
    nodes.emplace("w", node("w", {}));
    EXPECT_EQ(rollup(any, nodes).counts.selected, 1);
}

const json* condition(const json& status, const std::string& type) {
    return find_condition(status["conditions"], type);
}

TEST(ClusterShimRollup, ReadyWhenEverySelectedNodeRunsThisGeneration) {
    const std::string key = "shim.containerd.x-k8s.io/spin";
    NodeViews nodes;
    nodes.emplace(
        "a", node("a", {{"wasm", "true"}, {key, "spin"}}, {{key, annotation("installed", 3)}}));
    json status = desired_status(shim(), rollup(shim(), nodes), std::nullopt, "T1");
    EXPECT_EQ(status["observedGeneration"], 3);
    EXPECT_EQ(status["nodes"],
              json({{"selected", 1}, {"installed", 1}, {"failed", 0}, {"updating", 0}}));
    EXPECT_EQ((*condition(status, "Ready"))["status"], "True");
    EXPECT_EQ((*condition(status, "Ready"))["observedGeneration"], 3);
    EXPECT_EQ((*condition(status, "Progressing"))["status"], "False");
    EXPECT_EQ((*condition(status, "Progressing"))["reason"], "Complete");
}

TEST(ClusterShimRollup, FailuresAreNamedAndNodesOnTheirWayAreProgress) {
    json status = desired_status(shim(), rollup(shim(), fleet()), std::nullopt, "T1");
    const json& ready = *condition(status, "Ready");
    EXPECT_EQ(ready["status"], "False");
    EXPECT_EQ(ready["reason"], "InstallFailed");
    EXPECT_NE(ready["message"].get<std::string>().find("b (sha256 mismatch)"), std::string::npos)
        << ready["message"];
    const json& progressing = *condition(status, "Progressing");
    EXPECT_EQ(progressing["status"], "True");
    EXPECT_EQ(progressing["reason"], "Updating");
}

TEST(ClusterShimRollup, ANodeWhoseSlotWatchIsRefusedIsNamedWithTheServersMessage) {
    const std::string requests = "shim.containerd.x-k8s.io/slot_requests";
    NodeViews nodes;
    nodes.emplace("a",
                  node("a", {{"wasm", "true"}},
                       {{requests, format_slot_requests({{"spin",
                                                          {"u-1", 3, "t1",
                                                           "watching its rollout slot Leases: "
                                                           "HTTP 403: leases is forbidden"}}})}}));
    nodes.emplace("b", node("b", {{"wasm", "true"}},
                            {{requests, format_slot_requests({{"spin", {"u-1", 3, "t1", ""}}})}}));
    const Rollup counted = rollup(shim(), nodes);
    ASSERT_EQ(counted.refused.size(), 1U);
    const json status = desired_status(shim(), counted, std::nullopt, "T1");
    const json& progressing = *condition(status, "Progressing");
    EXPECT_EQ(progressing["status"], "True");
    EXPECT_EQ(progressing["reason"], "Refused");
    const std::string message = progressing["message"];
    EXPECT_NE(message.find("2 of 2 selected nodes have not reached generation 3 yet"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("a (watching its rollout slot Leases: HTTP 403: leases is forbidden)"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("b ("), std::string::npos) << "b is refused nothing: " << message;
    // A node that is not selected says nothing here.
    nodes.at("a").labels = {};
    EXPECT_TRUE(rollup(shim(), nodes).refused.empty());
}

TEST(ClusterShimRollup, NoSelectedNodeIsNotReady) {
    json status = desired_status(shim(), rollup(shim(), {}), std::nullopt, "T1");
    EXPECT_EQ((*condition(status, "Ready"))["reason"], "NoNodesSelected");
    EXPECT_EQ((*condition(status, "Ready"))["status"], "False");
}

TEST(ClusterShimRollup, ADeletedShimReportsTheNodesStillCarryingIt) {
    json deleted = shim();
    deleted["metadata"]["deletionTimestamp"] = "2026-11-24T00:00:00Z";
    json status = desired_status(deleted, rollup(deleted, fleet()), std::nullopt, "T1");
    EXPECT_EQ((*condition(status, "Ready"))["reason"], "Deleting");
    EXPECT_EQ((*condition(status, "Progressing"))["reason"], "Uninstalling");
    EXPECT_NE((*condition(status, "Progressing"))["message"].get<std::string>().find(
                  "by 6 node(s): a (installed), b (failed: sha256 mismatch), c (installing), "
                  "d (installed), e (failed: old) and 1 more"),
              std::string::npos);
}

TEST(ClusterShimRollup, TransitionTimeMovesOnlyWithTheStatus) {
    json object = shim();
    object["status"] = desired_status(object, rollup(object, fleet()), std::nullopt, "T1");
    // The same facts later: nothing to write.
    json again = desired_status(object, rollup(object, fleet()), std::nullopt, "T2");
    EXPECT_FALSE(status_differs(object, again));
    // One more node installed: the counts and message change, Ready stays False: same time.
    NodeViews more = fleet();
    more["c"].labels["shim.containerd.x-k8s.io/spin"] = "spin";
    more["c"].shim_annotations["shim.containerd.x-k8s.io/spin"] = annotation("installed", 3);
    json progressed = desired_status(object, rollup(object, more), std::nullopt, "T3");
    EXPECT_TRUE(status_differs(object, progressed));
    EXPECT_FALSE(status_differs_beyond_progress(object, progressed)); // may wait
    EXPECT_EQ((*condition(progressed, "Ready"))["lastTransitionTime"], "T1");
    // Every selected node installed: Ready turns True, at T4.
    NodeViews done;
    done.emplace("a", node("a", {{"wasm", "true"}, {"shim.containerd.x-k8s.io/spin", "spin"}},
                           {{"shim.containerd.x-k8s.io/spin", annotation("installed", 3)}}));
    json ready = desired_status(object, rollup(object, done), std::nullopt, "T4");
    EXPECT_EQ((*condition(ready, "Ready"))["lastTransitionTime"], "T4");
    EXPECT_TRUE(status_differs_beyond_progress(object, ready)); // written at once
    // A new generation observed is more than progress, even with the same counts.
    json next = again;
    next["observedGeneration"] = next["observedGeneration"].get<long>() + 1;
    EXPECT_TRUE(status_differs_beyond_progress(object, next));
}

json with_nodes(int selected, int installed, int failed, const std::string& message = "m") {
    return {{"nodes",
             {{"selected", selected},
              {"installed", installed},
              {"failed", failed},
              {"updating", selected - installed - failed}}},
            {"conditions", json::array({{{"type", "Ready"}, {"message", message}}})}};
}

TEST(ClusterShimRollup, ProgressAloneIsWrittenOnlyWhenItReachesAnotherStep) {
    json object = shim();
    object["status"] = with_nodes(10, 0, 0);
    // 4 of 10 done: still the first half, held back however long it has been.
    EXPECT_FALSE(progress_reached_another_step(object, with_nodes(10, 4, 0)));
    // Half of them done, installed or failed alike: the halfway step.
    EXPECT_TRUE(progress_reached_another_step(object, with_nodes(10, 5, 0)));
    EXPECT_TRUE(progress_reached_another_step(object, with_nodes(10, 3, 2)));
    object["status"] = with_nodes(10, 5, 0);
    EXPECT_FALSE(progress_reached_another_step(object, with_nodes(10, 9, 0)));
    EXPECT_TRUE(progress_reached_another_step(object, with_nodes(10, 10, 0)));
    // A node more selected can move the step back: that is another step too.
    EXPECT_TRUE(progress_reached_another_step(object, with_nodes(11, 5, 0)));
    // The same counts with another message (a deleted Shim's nodes still carrying it): written
    // on the interval as before.
    EXPECT_TRUE(progress_reached_another_step(object, with_nodes(10, 5, 0, "other")));
    // Nothing on its way: a Node deleted from a finished rollout is written (10 of 10 to 9 of 9,
    // the same step).
    object["status"] = with_nodes(10, 10, 0);
    EXPECT_TRUE(progress_reached_another_step(object, with_nodes(9, 9, 0)));
    EXPECT_EQ(progress_step(with_nodes(10, 10, 0)), k_progress_steps);
    EXPECT_EQ(progress_step(with_nodes(0, 0, 0)), 0);
    EXPECT_EQ(progress_step(json::object()), 0);
}

TEST(ClusterShimRollup, OtherConditionsAreKeptAndTheRuntimeClassOneIsSetWhenKnown) {
    json object = shim();
    object["status"]["conditions"] = json::array({{{"type", "RolloutHalted"},
                                                   {"status", "False"},
                                                   {"lastTransitionTime", "T0"},
                                                   {"reason", "NoFailure"},
                                                   {"message", "m"}},
                                                  {{"type", "RuntimeClassReady"},
                                                   {"status", "False"},
                                                   {"lastTransitionTime", "T0"},
                                                   {"reason", "Conflict"},
                                                   {"message", "foreign"}}});
    json kept = desired_status(object, rollup(object, fleet()), std::nullopt, "T1");
    EXPECT_EQ((*condition(kept, "RolloutHalted"))["reason"], "NoFailure");
    EXPECT_EQ((*condition(kept, "RuntimeClassReady"))["reason"], "Conflict");
    Condition ready{"RuntimeClassReady", ConditionStatus::true_, "Ready", "ok"};
    json set = desired_status(object, rollup(object, fleet()), ready, "T1");
    EXPECT_EQ((*condition(set, "RuntimeClassReady"))["status"], "True");
    EXPECT_EQ((*condition(set, "RuntimeClassReady"))["lastTransitionTime"], "T1");
    EXPECT_EQ(set["conditions"].size(), 5u); // and Ready, Progressing, PoolConfined
}

// A node installed at generation 3 that says which runtime type it derived from its artifact.
NodeView deriving(const std::string& name, const std::string& runtime_type) {
    const std::string key = "shim.containerd.x-k8s.io/spin";
    return node(
        name, {{"wasm", "true"}, {key, "spin"}},
        {{key,
          json{{"state", "installed"}, {"generation", 3}, {"runtimeType", runtime_type}}.dump()}});
}

TEST(ClusterShimRollup, TheStatusSaysTheRuntimeTypeTheInstalledNodesDerived) {
    json object = shim(); // no runtimeType, no binary: each node's artifact says it
    NodeViews nodes = fleet();
    nodes.insert_or_assign("a", deriving("a", "io.containerd.spin.v2"));
    nodes.insert_or_assign("c", deriving("c", "io.containerd.spin.v2"));
    json status = desired_status(object, rollup(object, nodes), std::nullopt, "T1");
    EXPECT_EQ(status["runtimeType"], "io.containerd.spin.v2");
    EXPECT_EQ(status["runtimeTypeFrom"],
              "each node's artifact: the name of its containerd-shim-<name>-v<N> binary; every "
              "node installed at this generation derived io.containerd.spin.v2");
    // One more node agreeing changes only the progress: no count in the text.
    object["status"] = status;
    nodes.insert_or_assign("d", deriving("d", "io.containerd.spin.v2"));
    EXPECT_FALSE(status_differs_beyond_progress(
        object, desired_status(object, rollup(object, nodes), std::nullopt, "T2")));
    // A node whose artifact says another type: no one type to show, and the text names them.
    nodes.insert_or_assign("c", deriving("c", "io.containerd.spin.v3"));
    json split = desired_status(object, rollup(object, nodes), std::nullopt, "T3");
    EXPECT_TRUE(split["runtimeType"].is_null()); // deleted by the merge patch
    EXPECT_EQ(split["runtimeTypeFrom"],
              "each node's artifact: the name of its containerd-shim-<name>-v<N> binary; the "
              "installed nodes derived different runtime types (their artifacts differ): "
              "io.containerd.spin.v2 on a, d; io.containerd.spin.v3 on c");
}

TEST(ClusterShimRollup, AShimsOwnRuntimeTypeIsWhatTheStatusSays) {
    json object = shim();
    object["spec"]["runtimeType"] = "io.containerd.spin.v2";
    NodeViews nodes = fleet();
    nodes.insert_or_assign("a", deriving("a", "io.containerd.spin.v2"));
    json status = desired_status(object, rollup(object, nodes), std::nullopt, "T1");
    EXPECT_EQ(status["runtimeType"], "io.containerd.spin.v2");
    EXPECT_EQ(status["runtimeTypeFrom"], "spec.runtimeType");
}

TEST(ClusterNodeShimState, NodeViewsKeepLabelsAndOnlyShimkeepersAnnotations) {
    json object = {
        {"metadata",
         {{"name", "a"},
          {"labels", {{"wasm", "true"}}},
          {"annotations", {{"shim.containerd.x-k8s.io/spin", "{}"}, {"node.alpha/ttl", "0"}}}}},
        {"status", {{"conditions", json::array()}}}};
    NodeView view = NodeView::of(object);
    EXPECT_EQ(view.labels, (std::map<std::string, std::string>{{"wasm", "true"}}));
    EXPECT_EQ(view.shim_annotations,
              (std::map<std::string, std::string>{{"shim.containerd.x-k8s.io/spin", "{}"}}));
    object["status"]["conditions"].push_back({{"type", "Ready"}});
    EXPECT_EQ(NodeView::of(object), view); // a heartbeat is no change
}

} // namespace cluster_shim_rollup
} // namespace
} // namespace shimkeeper::cluster::model
