// A Shim's runtimeClass.overhead.podFixed and runtimeClass.tolerations: refused with the field
// named when the API server would refuse them in a RuntimeClass, copied into the RuntimeClass as
// written and nothing added, changed and removed with the Shim, and an overhead the API server
// gave back in its own spelling left alone.
#include "shimkeeper/cluster/model/runtime_class.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_runtime_class_overhead {

using nlohmann::json;

json kata_shim(const json& runtime_class_extra) {
    json runtime_class = {{"name", "kata-qemu"}};
    runtime_class.update(runtime_class_extra);
    return {{"apiVersion", "containerd.x-k8s.io/v1alpha1"},
            {"kind", "Shim"},
            {"metadata", {{"name", "kata-qemu"}, {"uid", "u-1"}}},
            {"spec", {{"runtimeClass", runtime_class}}}};
}

const json k_overhead = {{"podFixed", {{"cpu", "250m"}, {"memory", "160Mi"}}}};
const json k_tolerations = json::array(
    {{{"key", "kata"}, {"operator", "Exists"}, {"effect", "NoSchedule"}},
     {{"key", "pool"}, {"value", "sandbox"}, {"effect", "NoExecute"}, {"tolerationSeconds", 30}}});

ShimIdentity kata_identity(const json& shim) {
    auto identity = shim_identity_of(shim);
    EXPECT_TRUE(identity) << identity.error().message();
    return identity.value_or(ShimIdentity{});
}

std::string refusal(const json& runtime_class_extra) {
    auto identity = shim_identity_of(kata_shim(runtime_class_extra));
    return identity ? "accepted" : identity.error().message();
}

TEST(ClusterRuntimeClassOverhead, TheRuntimeClassCarriesExactlyTheGivenOverheadAndTolerations) {
    const json shim = kata_shim({{"overhead", k_overhead}, {"tolerations", k_tolerations}});
    const json desired = desired_runtime_class(kata_identity(shim), shim);
    EXPECT_EQ(desired["overhead"], k_overhead);
    EXPECT_EQ(desired["scheduling"]["tolerations"], k_tolerations);
    EXPECT_EQ(desired["scheduling"]["nodeSelector"],
              json({{"shim.containerd.x-k8s.io/kata-qemu", "kata-qemu"}}));
}

TEST(ClusterRuntimeClassOverhead, WithoutThemTheRuntimeClassHasNone) {
    for (const json& extra : {json::object(), json({{"overhead", json::object()}}),
                              json({{"overhead", {{"podFixed", json::object()}}}}),
                              json({{"tolerations", json::array()}})}) {
        const json shim = kata_shim(extra);
        const json desired = desired_runtime_class(kata_identity(shim), shim);
        EXPECT_FALSE(desired.contains("overhead")) << extra.dump();
        EXPECT_FALSE(desired["scheduling"].contains("tolerations")) << extra.dump();
    }
}

TEST(ClusterRuntimeClassOverhead, EmptyAndUnknownTolerationFieldsAreLeftOut) {
    // The API server drops empty strings and unknown fields: the RuntimeClass read back must
    // equal what the coordinator wants, or it would patch on every pass.
    const json shim = kata_shim(
        {{"tolerations",
          json::array({{{"key", "kata"}, {"operator", "Equal"}, {"value", ""}, {"x", 1}}})}});
    EXPECT_EQ(kata_identity(shim).overhead_tolerations.tolerations,
              json::array({{{"key", "kata"}, {"operator", "Equal"}}}));
}

TEST(ClusterRuntimeClassOverhead, AChangeIsPatchedAndARemovalRemoves) {
    const json before = kata_shim({{"overhead", k_overhead}, {"tolerations", k_tolerations}});
    json existing = desired_runtime_class(kata_identity(before), before);
    existing["metadata"]["resourceVersion"] = "5";

    const json changed = kata_shim({{"overhead", {{"podFixed", {{"cpu", "500m"}}}}},
                                    {"tolerations", json::array({k_tolerations[0]})}});
    const json desired = desired_runtime_class(kata_identity(changed), changed);
    RuntimeClassPlan plan = plan_runtime_class(&existing, desired, kata_identity(changed));
    ASSERT_EQ(plan.action, RuntimeClassPlan::Action::patch);
    EXPECT_EQ(
        plan.operations,
        json::array({{{"op", "add"}, {"path", "/scheduling"}, {"value", desired["scheduling"]}},
                     {{"op", "add"}, {"path", "/overhead"}, {"value", desired["overhead"]}}}));

    const json bare = kata_shim(json::object());
    const json none = desired_runtime_class(kata_identity(bare), bare);
    plan = plan_runtime_class(&existing, none, kata_identity(bare));
    ASSERT_EQ(plan.action, RuntimeClassPlan::Action::patch);
    EXPECT_EQ(plan.operations,
              json::array({{{"op", "add"}, {"path", "/scheduling"}, {"value", none["scheduling"]}},
                           {{"op", "remove"}, {"path", "/overhead"}}}));
    EXPECT_FALSE(none["scheduling"].contains("tolerations"));
}

TEST(ClusterRuntimeClassOverhead, TheApiServersSpellingOfTheSameOverheadIsKept) {
    const json shim = kata_shim(
        {{"overhead",
          {{"podFixed", {{"cpu", "0.25"}, {"memory", "1024Mi"}, {"example.com/vm", 1}}}}}});
    const json desired = desired_runtime_class(kata_identity(shim), shim);
    json existing = desired;
    existing["overhead"]["podFixed"] = {
        {"cpu", "250m"}, {"memory", "1Gi"}, {"example.com/vm", "1"}};
    EXPECT_EQ(plan_runtime_class(&existing, desired, kata_identity(shim)).action,
              RuntimeClassPlan::Action::keep);
    existing["overhead"]["podFixed"]["memory"] = "1G"; // not the same amount
    EXPECT_EQ(plan_runtime_class(&existing, desired, kata_identity(shim)).action,
              RuntimeClassPlan::Action::patch);
}

TEST(ClusterRuntimeClassOverhead, BadOverheadIsRefusedNamingTheField) {
    auto overhead = [](const json& pod_fixed) {
        return json({{"overhead", {{"podFixed", pod_fixed}}}});
    };
    EXPECT_EQ(refusal(overhead({{"cpu", "lots"}})),
              "Shim/kata-qemu: spec.runtimeClass.overhead.podFixed[cpu] is \"lots\", not a "
              "quantity: it must start with a number, such as 250m, 0.5, 1Gi or 1e3");
    EXPECT_EQ(refusal(overhead({{"memory", "-1Mi"}})),
              "Shim/kata-qemu: spec.runtimeClass.overhead.podFixed[memory] is \"-1Mi\": an "
              "overhead cannot be negative");
    EXPECT_EQ(refusal(overhead({{"memory", 1.5}})),
              "Shim/kata-qemu: spec.runtimeClass.overhead.podFixed[memory] must be a quantity "
              "such as \"250m\" or \"160Mi\", not number");
    EXPECT_EQ(refusal(overhead({{"gpu", "1"}})),
              "Shim/kata-qemu: spec.runtimeClass.overhead.podFixed[gpu] names no resource a "
              "pod's overhead can hold: give cpu, memory, ephemeral-storage, hugepages-<size> or "
              "a domain-prefixed extended resource such as example.com/gpu");
    EXPECT_EQ(refusal(overhead({{"example.com/vm", "500m"}})),
              "Shim/kata-qemu: spec.runtimeClass.overhead.podFixed[example.com/vm] must be a "
              "whole number: an extended resource counts whole units");
    EXPECT_EQ(refusal(overhead({{"hugepages-2Mi", "3Mi"}})),
              "Shim/kata-qemu: spec.runtimeClass.overhead.podFixed[hugepages-2Mi] must be a "
              "whole number of 2Mi pages");
    EXPECT_EQ(refusal(overhead({{"hugepages-2Mi", "4Mi"}})), "accepted");
    EXPECT_EQ(refusal({{"overhead", "250m"}}),
              "Shim/kata-qemu: spec.runtimeClass.overhead must be an object with podFixed");
}

TEST(ClusterRuntimeClassOverhead, BadTolerationsAreRefusedNamingTheField) {
    auto tolerations = [](const json& toleration) {
        return json({{"tolerations", json::array({k_tolerations[0], toleration})}});
    };
    EXPECT_EQ(refusal(tolerations({{"key", "kata"}, {"operator", "Lt"}, {"value", "3"}})),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1].operator is \"Lt\": it must be "
              "Exists or Equal");
    EXPECT_EQ(refusal(tolerations({{"key", "kata"}, {"effect", "NoRun"}})),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1].effect is \"NoRun\": it must be "
              "NoSchedule, PreferNoSchedule or NoExecute (or left out for every effect)");
    EXPECT_EQ(refusal(tolerations({{"key", "kata"}, {"operator", "Exists"}, {"value", "yes"}})),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1].value must be empty when "
              "operator is Exists (Exists tolerates the key whatever its value)");
    EXPECT_EQ(refusal(tolerations({{"value", "yes"}})),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1].operator must be Exists when key "
              "is empty (an empty key with Exists tolerates every taint)");
    EXPECT_EQ(refusal(tolerations({{"key", "a b"}})),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1].key is \"a b\", not a taint key "
              "(a label key such as example.com/sandbox)");
    EXPECT_EQ(refusal(tolerations({{"key", "kata"}, {"tolerationSeconds", 5}})),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1].tolerationSeconds applies only "
              "with effect NoExecute (how long a pod stays on a node tainted NoExecute)");
    EXPECT_EQ(refusal(tolerations(k_tolerations[0])),
              "Shim/kata-qemu: spec.runtimeClass.tolerations[1] repeats an earlier toleration "
              "(the same key, operator, value and effect)");
    EXPECT_EQ(refusal({{"tolerations", {{"key", "kata"}}}}),
              "Shim/kata-qemu: spec.runtimeClass.tolerations must be a list of tolerations");
    EXPECT_EQ(refusal(tolerations({{"operator", "Exists"}})), "accepted"); // every taint
}

TEST(ClusterRuntimeClassOverhead, TheProposalsSpellingIsNamedAsWritten) {
    json shim = kata_shim(json::object());
    shim["spec"]["runtimeclass"] = {{"name", "kata-qemu"}, {"tolerations", json::array({1})}};
    shim["spec"].erase("runtimeClass");
    auto identity = shim_identity_of(shim);
    ASSERT_FALSE(identity);
    EXPECT_EQ(identity.error().message(),
              "Shim/kata-qemu: spec.runtimeclass.tolerations[0] must be an object (key, "
              "operator, value, effect, tolerationSeconds)");
}

} // namespace cluster_runtime_class_overhead
} // namespace
} // namespace shimkeeper::cluster::model
