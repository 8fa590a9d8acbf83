// The RuntimeClass a Shim gets, and what the coordinator does about the one it finds: create,
// keep, patch or replace its own, never touch anyone else's.
#include "shimkeeper/cluster/model/runtime_class.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_runtime_class {

using nlohmann::json;

json shim() {
    return {{"apiVersion", "containerd.x-k8s.io/v1alpha1"},
            {"kind", "Shim"},
            {"metadata", {{"name", "spin-v2"}, {"uid", "u-1"}, {"generation", 1}}},
            {"spec", {{"handler", "spin"}, {"runtimeClass", {{"name", "wasm-spin"}}}}}};
}

ShimIdentity identity_of(const json& object) {
    auto identity = shim_identity_of(object);
    EXPECT_TRUE(identity) << identity.error().message();
    return identity.value_or(ShimIdentity{});
}

TEST(ClusterRuntimeClass, NameAndHandlerComeFromTheShimWithItsNameAsDefault) {
    EXPECT_EQ(identity_of(shim()).runtime_class, "wasm-spin");
    EXPECT_EQ(identity_of(shim()).handler, "spin");
    json bare = shim();
    bare["spec"] = json::object();
    ShimIdentity identity = identity_of(bare);
    EXPECT_EQ(identity.runtime_class, "spin-v2");
    EXPECT_EQ(identity.handler, "spin-v2");
}

TEST(ClusterRuntimeClass, ABadNameOrHandlerIsRefusedNamingTheField) {
    json bad = shim();
    bad["spec"]["runtimeClass"]["name"] = "Not_Valid";
    auto identity = shim_identity_of(bad);
    ASSERT_FALSE(identity);
    EXPECT_EQ(identity.error().message(),
              "Shim/spin-v2: spec.runtimeClass.name is not a valid name");
    bad = shim();
    bad["spec"]["handler"] = 7;
    identity = shim_identity_of(bad);
    ASSERT_FALSE(identity);
    EXPECT_EQ(identity.error().message(),
              "Shim/spin-v2: spec.handler must be a string, not number");
}

TEST(ClusterRuntimeClass, TheDesiredObjectSchedulesOnTheInstalledLabelAndSaysWhoseItIs) {
    json desired = desired_runtime_class(identity_of(shim()), shim());
    EXPECT_EQ(desired["metadata"]["name"], "wasm-spin");
    EXPECT_EQ(desired["handler"], "spin");
    // Selects the nodes labelled as serving exactly this handler, never another one's.
    EXPECT_EQ(desired["scheduling"]["nodeSelector"],
              json({{"shim.containerd.x-k8s.io/spin-v2", "spin"}}));
    EXPECT_EQ(desired["metadata"]["labels"]["app.kubernetes.io/managed-by"], "shimkeeper");
    EXPECT_EQ(desired["metadata"]["ownerReferences"][0]["uid"], "u-1");
    EXPECT_EQ(runtime_class_owner(desired), "spin-v2");
}

TEST(ClusterRuntimeClass, TheShimsNodeSelectorIsSelectedOnBesideTheReadinessLabel) {
    // A node may write its readiness label itself: alone, it would let a node of pool a take
    // the pods of a Shim meant for pool b. The Shim's own labels keep such a node out.
    json pooled = shim();
    pooled["spec"]["nodeSelector"] = {{"pool", "b"}, {"node-restriction.kubernetes.io/tier", "x"}};
    const ShimIdentity identity = identity_of(pooled);
    json desired = desired_runtime_class(identity, pooled);
    EXPECT_EQ(desired["scheduling"]["nodeSelector"],
              json({{"pool", "b"},
                    {"node-restriction.kubernetes.io/tier", "x"},
                    {"shim.containerd.x-k8s.io/spin-v2", "spin"}}));
    RuntimeClassPlan plan = plan_runtime_class(nullptr, desired, identity);
    EXPECT_EQ(plan.action, RuntimeClassPlan::Action::create);
    EXPECT_EQ(plan.condition.message,
              "RuntimeClass wasm-spin (handler spin) schedules onto nodes labelled "
              "shim.containerd.x-k8s.io/spin-v2=spin and node-restriction.kubernetes.io/tier=x, "
              "pool=b");

    // One made before (the readiness label alone) is brought in line by a patch.
    json existing = desired_runtime_class(identity, shim());
    existing["metadata"]["resourceVersion"] = "7";
    plan = plan_runtime_class(&existing, desired, identity);
    ASSERT_EQ(plan.action, RuntimeClassPlan::Action::patch);
    EXPECT_EQ(
        plan.operations,
        json::array({{{"op", "add"}, {"path", "/scheduling"}, {"value", desired["scheduling"]}}}));

    // The readiness key is the coordinator's: a Shim's selector cannot change its value.
    pooled["spec"]["nodeSelector"]["shim.containerd.x-k8s.io/spin-v2"] = "runc";
    EXPECT_EQ(
        desired_runtime_class(
            identity, pooled)["scheduling"]["nodeSelector"]["shim.containerd.x-k8s.io/spin-v2"],
        "spin");
}

TEST(ClusterRuntimeClass, ASelectorARuntimeClassCannotCarryGetsNoRuntimeClass) {
    for (const json& selector : {json({{"pool", 7}}), json({{"pool", "a b"}}),
                                 json({{"Not_A_Domain/pool", "b"}}), json({{"", "b"}})}) {
        json odd = shim();
        odd["spec"]["nodeSelector"] = selector;
        const ShimIdentity identity = identity_of(odd);
        RuntimeClassPlan plan =
            plan_runtime_class(nullptr, desired_runtime_class(identity, odd), identity);
        EXPECT_EQ(plan.action, RuntimeClassPlan::Action::invalid) << selector.dump();
        EXPECT_EQ(plan.condition.reason, "InvalidSpec");
        EXPECT_NE(plan.condition.message.find("spec.nodeSelector"), std::string::npos)
            << plan.condition.message;
    }
    json empty_value = shim();
    empty_value["spec"]["nodeSelector"] = {{"example.org/gpu", ""}}; // a valid label value
    const ShimIdentity identity = identity_of(empty_value);
    EXPECT_EQ(
        plan_runtime_class(nullptr, desired_runtime_class(identity, empty_value), identity).action,
        RuntimeClassPlan::Action::create);
}

TEST(ClusterRuntimeClass, MissingIsCreatedAndOursUnchangedIsKept) {
    ShimIdentity identity = identity_of(shim());
    json desired = desired_runtime_class(identity, shim());
    EXPECT_EQ(plan_runtime_class(nullptr, desired, identity).action,
              RuntimeClassPlan::Action::create);
    json existing = desired;
    existing["metadata"]["resourceVersion"] = "9";
    existing["metadata"]["creationTimestamp"] = "2026-11-24T00:00:00Z";
    RuntimeClassPlan plan = plan_runtime_class(&existing, desired, identity);
    EXPECT_EQ(plan.action, RuntimeClassPlan::Action::keep);
    EXPECT_EQ(plan.condition.status, ConditionStatus::true_);
}

TEST(ClusterRuntimeClass, OursWithAnotherSelectorIsPatchedAndAnotherHandlerReplaced) {
    ShimIdentity identity = identity_of(shim());
    json desired = desired_runtime_class(identity, shim());
    json existing = desired;
    existing["scheduling"]["nodeSelector"] = {{"wasm", "true"}};
    RuntimeClassPlan plan = plan_runtime_class(&existing, desired, identity);
    ASSERT_EQ(plan.action, RuntimeClassPlan::Action::patch);
    EXPECT_EQ(
        plan.operations,
        json::array({{{"op", "add"}, {"path", "/scheduling"}, {"value", desired["scheduling"]}}}));
    existing = desired;
    existing["handler"] = "spin-old"; // immutable in the API
    EXPECT_EQ(plan_runtime_class(&existing, desired, identity).action,
              RuntimeClassPlan::Action::replace);
}

TEST(ClusterRuntimeClass, AForeignOneOrAnotherShimsIsAConflictNeverAChange) {
    ShimIdentity identity = identity_of(shim());
    json desired = desired_runtime_class(identity, shim());
    json foreign = {{"metadata", {{"name", "wasm-spin"}}}, {"handler", "spin"}};
    RuntimeClassPlan plan = plan_runtime_class(&foreign, desired, identity);
    EXPECT_EQ(plan.action, RuntimeClassPlan::Action::conflict);
    EXPECT_EQ(plan.condition.status, ConditionStatus::false_);
    EXPECT_EQ(plan.condition.reason, "Conflict");
    EXPECT_NE(plan.condition.message.find("was not created by shimkeeper"), std::string::npos);
    json other = desired;
    other["metadata"]["annotations"]["containerd.x-k8s.io/shim"] = "slight-v1";
    plan = plan_runtime_class(&other, desired, identity);
    EXPECT_EQ(plan.action, RuntimeClassPlan::Action::conflict);
    EXPECT_NE(plan.condition.message.find("belongs to Shim slight-v1"), std::string::npos);
    json unlabelled = desired;
    unlabelled["metadata"].erase("labels"); // our annotation alone proves nothing
    EXPECT_EQ(plan_runtime_class(&unlabelled, desired, identity).action,
              RuntimeClassPlan::Action::conflict);
}

TEST(ClusterRuntimeClass, ANameTheNodeAcceptsButTheApiWouldRefuseGetsNoRuntimeClass) {
    json dotted = shim();
    dotted["spec"]["handler"] = "spin.v2"; // a fine containerd handler, not a DNS label
    ShimIdentity identity = identity_of(dotted);
    RuntimeClassPlan plan =
        plan_runtime_class(nullptr, desired_runtime_class(identity, dotted), identity);
    EXPECT_EQ(plan.action, RuntimeClassPlan::Action::invalid);
    EXPECT_EQ(plan.condition.reason, "InvalidSpec");
    EXPECT_NE(plan.condition.message.find("handler spin.v2"), std::string::npos);
    json underscored = shim();
    underscored["spec"]["runtimeClass"]["name"] = "wasm_spin";
    identity = identity_of(underscored);
    plan = plan_runtime_class(nullptr, desired_runtime_class(identity, underscored), identity);
    EXPECT_EQ(plan.action, RuntimeClassPlan::Action::invalid);
    EXPECT_NE(plan.condition.message.find("wasm_spin"), std::string::npos);
    json dotted_name = shim();
    dotted_name["spec"]["runtimeClass"]["name"] = "wasm.spin";
    identity = identity_of(dotted_name);
    EXPECT_EQ(
        plan_runtime_class(nullptr, desired_runtime_class(identity, dotted_name), identity).action,
        RuntimeClassPlan::Action::create);
}

} // namespace cluster_runtime_class
} // namespace
} // namespace shimkeeper::cluster::model
