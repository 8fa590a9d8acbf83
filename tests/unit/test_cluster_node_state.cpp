// What a node says on its own Node: the label only with `installed`, the state annotation as
// JSON, one merge patch for exactly what differs, and no patch at all when only the time would.
#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/slot_hold.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_node_state {

using nlohmann::json;

NodeShimState installed(long generation) {
    return {ShimState::installed,   generation, "sha256:aa", "", "2026-11-24T01:00:00Z", "demo-h",
            "io.containerd.demo.v1"};
}

json node_with(const json& labels, const json& annotations) {
    return {{"metadata", {{"name", "node-a"}, {"labels", labels}, {"annotations", annotations}}}};
}

TEST(ClusterNodeState, InstalledAddsLabelAndAnnotation) {
    auto patch = node_patch(shim_keys_of(node_with(json::object(), json::object())),
                            {{"demo", installed(3)}}, {});
    ASSERT_TRUE(patch);
    // The label names the handler served: what the Shim's RuntimeClass selects.
    EXPECT_EQ((*patch)["metadata"]["labels"]["shim.containerd.x-k8s.io/demo"], "demo-h");
    const auto said = node_shim_state_of(
        (*patch)["metadata"]["annotations"]["shim.containerd.x-k8s.io/demo"].get<std::string>());
    ASSERT_TRUE(said);
    EXPECT_EQ(said->state, ShimState::installed);
    EXPECT_EQ(said->generation, 3);
    EXPECT_EQ(said->digest, "sha256:aa");
}

TEST(ClusterNodeState, TheRuntimeTypeTheNodeRunsIsInTheAnnotation) {
    const json node = node_with({{"shim.containerd.x-k8s.io/demo", "demo-h"}},
                                {{"shim.containerd.x-k8s.io/demo", to_json(installed(3)).dump()}});
    const auto said = node_shim_state_of(to_json(installed(3)).dump());
    ASSERT_TRUE(said);
    EXPECT_EQ(said->runtime_type, "io.containerd.demo.v1");
    // Another artifact deriving another type at the same generation is news for the Node.
    NodeShimState other = installed(3);
    other.runtime_type = "io.containerd.demo.v2";
    EXPECT_TRUE(node_patch(shim_keys_of(node), {{"demo", other}}, {}));
}

TEST(ClusterNodeState, SameStateAtAnotherTimeIsNoPatch) {
    const json node = node_with({{"shim.containerd.x-k8s.io/demo", "demo-h"}, {"zone", "a"}},
                                {{"shim.containerd.x-k8s.io/demo", to_json(installed(3)).dump()}});
    NodeShimState later = installed(3);
    later.time = "2026-11-24T02:00:00Z";
    EXPECT_FALSE(node_patch(shim_keys_of(node), {{"demo", later}}, {}));
    EXPECT_TRUE(node_patch(shim_keys_of(node), {{"demo", installed(4)}}, {}));
}

TEST(ClusterNodeState, FailedTakesTheLabelOffAndSaysWhy) {
    const json node = node_with({{"shim.containerd.x-k8s.io/demo", "true"}},
                                {{"shim.containerd.x-k8s.io/demo", to_json(installed(3)).dump()}});
    NodeShimState failed{ShimState::failed, 4, "", "HTTP 404 from https://x", "t", "", ""};
    auto patch = node_patch(shim_keys_of(node), {{"demo", failed}}, {});
    ASSERT_TRUE(patch);
    EXPECT_TRUE((*patch)["metadata"]["labels"]["shim.containerd.x-k8s.io/demo"].is_null());
    const auto said = node_shim_state_of(
        (*patch)["metadata"]["annotations"]["shim.containerd.x-k8s.io/demo"].get<std::string>());
    ASSERT_TRUE(said);
    EXPECT_EQ(said->reason, "HTTP 404 from https://x");
}

TEST(ClusterNodeState, ForgetRemovesOnlyShimkeeperKeysOfThatShim) {
    const json node = node_with({{"shim.containerd.x-k8s.io/old", "true"}, {"zone", "a"}},
                                {{"shim.containerd.x-k8s.io/old", "{}"}, {"note", "x"}});
    auto patch = node_patch(shim_keys_of(node), {}, {"old", "never-there"});
    ASSERT_TRUE(patch);
    EXPECT_EQ(*patch, json::parse(R"({"metadata": {
        "labels": {"shim.containerd.x-k8s.io/old": null},
        "annotations": {"shim.containerd.x-k8s.io/old": null}}})"));
}

// The node's slot entry (slot_hold.hpp) is no shim of its own: a report never forgets it as one,
// and it goes with the shim it is about.
TEST(ClusterNodeState, ASlotEntryIsNoShimAndGoesWithItsShim) {
    const SlotHold hold{"old", "old-slot-0", "grant-1", "u-1", 3, "t", {}, {}, true};
    const json node =
        node_with({}, {{"shim.containerd.x-k8s.io/old", "{}"},
                       {slot_hold_key("old"), format_slot_hold(hold)},
                       {slot_hold_key("kept"),
                        format_slot_hold(SlotHold{"kept", "kept-slot-0", "g", "u-2", 1, "t"})}});
    const NodeShimKeys keys = shim_keys_of(node);
    EXPECT_EQ(keys.annotations.size(), 1U) << "only old's state";
    EXPECT_EQ(keys.holds.size(), 2U);
    EXPECT_EQ(node_patch(keys, {}, {}), std::nullopt) << "nothing forgotten, nothing written";
    auto patch = node_patch(keys, {}, {"old"});
    ASSERT_TRUE(patch);
    EXPECT_EQ(*patch, json::parse(R"({"metadata": {"annotations": {
        "shim.containerd.x-k8s.io/old": null, "shim.containerd.x-k8s.io/held_old": null}}})"));
}

TEST(ClusterNodeState, AHandEditedAnnotationIsRewritten) {
    const json node = node_with({{"shim.containerd.x-k8s.io/demo", "demo-h"}},
                                {{"shim.containerd.x-k8s.io/demo", "not json"}});
    EXPECT_FALSE(node_shim_state_of("not json"));
    EXPECT_FALSE(node_shim_state_of(R"({"state": "exploded"})"));
    auto patch = node_patch(shim_keys_of(node), {{"demo", installed(1)}}, {});
    ASSERT_TRUE(patch);
    EXPECT_FALSE((*patch)["metadata"].contains("labels"));
    EXPECT_TRUE((*patch)["metadata"]["annotations"].contains("shim.containerd.x-k8s.io/demo"));
}

TEST(ClusterNodeState, ANewHandlerRelabelsAndAnOldLabelValueIsReplaced) {
    // A label of an earlier agent ("true") or of the handler served before is rewritten.
    for (const char* before : {"true", "demo-old"}) {
        const json node =
            node_with({{"shim.containerd.x-k8s.io/demo", before}},
                      {{"shim.containerd.x-k8s.io/demo", to_json(installed(3)).dump()}});
        auto patch = node_patch(shim_keys_of(node), {{"demo", installed(3)}}, {});
        ASSERT_TRUE(patch) << before;
        EXPECT_EQ((*patch)["metadata"]["labels"]["shim.containerd.x-k8s.io/demo"], "demo-h");
    }
}

TEST(ClusterNodeState, InstalledWithoutAKnownHandlerCarriesNoLabel) {
    NodeShimState unknown = installed(3);
    unknown.handler.clear();
    EXPECT_FALSE(unknown.labelled());
}

} // namespace cluster_node_state
} // namespace
} // namespace shimkeeper::cluster::model
