// Shim objects as a node reads them: the ShimSpec they stand for (the same validation as a TOML
// [[shim]]), a clear error naming the object and field for each bad one, and node selection.
#include "shimkeeper/cluster/model/shim_object.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_shim_object {

using nlohmann::json;

const std::string k_sha(64, 'a');

json good_shim() {
    return json::parse(R"({
      "apiVersion": "containerd.x-k8s.io/v1alpha1", "kind": "Shim",
      "metadata": {"name": "spin-v2", "resourceVersion": "42"},
      "spec": {
        "handler": "spin",
        "runtimeType": "io.containerd.spin.v2",
        "options": {"SystemdCgroup": true, "Nested": {"Depth": 2}},
        "fetchStrategy": {"type": "anonymousHttp",
                          "anonHttp": {"location": "https://example.org/spin.tar.gz",
                                       "sha256": ")" +
                       k_sha + R"("}},
        "runtimeClass": {"name": "wasmtime-spin-v2"}
      }})");
}

std::string error_of(const json& shim, const std::string& arch = "amd64") {
    auto spec = shim_spec_of(shim, arch);
    EXPECT_FALSE(spec) << "accepted: " << shim.dump();
    return spec ? std::string() : spec.error().message();
}

TEST(ClusterShimObject, ShimsAreAClusterScopedResourceOfTheirGroup) {
    EXPECT_EQ(kubeapi::object_path(shims_resource(), "", "spin").value(),
              "/apis/containerd.x-k8s.io/v1alpha1/shims/spin");
}

TEST(ClusterShimObject, AGoodShimIsTheSameSpecAsItsTomlForm) {
    auto spec = shim_spec_of(good_shim(), "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->name, "spin-v2");
    EXPECT_EQ(spec->handler, "spin");
    EXPECT_EQ(spec->binary, "containerd-shim-spin-v2");
    EXPECT_EQ(spec->fetch.url, "https://example.org/spin.tar.gz");
    EXPECT_EQ(spec->fetch.sha256, k_sha);
    EXPECT_EQ(spec->options["SystemdCgroup"].value<bool>(), true);
    EXPECT_EQ(spec->options["Nested"]["Depth"].value<std::int64_t>(), 2);
    ASSERT_TRUE(spec->runtime_class);
    EXPECT_EQ(spec->runtime_class->name, "wasmtime-spin-v2");
    EXPECT_EQ(spec->location.to_string(), "Shim/spin-v2@42");
}

TEST(ClusterShimObject, HandlerDefaultsToTheNameAndBothSpellingsOfTheTypeAreAccepted) {
    json shim = good_shim();
    shim["spec"].erase("handler");
    shim["spec"]["fetchStrategy"]["type"] = "annonymousHttp";
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->handler, "spin-v2");
}

TEST(ClusterShimObject, ThePlatformOfThisNodeIsChosen) {
    json shim = good_shim();
    shim["spec"]["fetchStrategy"].erase("anonHttp");
    shim["spec"]["fetchStrategy"]["platforms"] = json::array(
        {{{"arch", "x86_64"}, {"location", "https://e.org/amd64.tgz"}, {"sha256", k_sha}},
         {{"arch", "arm64"}, {"location", "https://e.org/arm64.tgz"}, {"sha256", k_sha}}});
    EXPECT_EQ(shim_spec_of(shim, "arm64")->fetch.url, "https://e.org/arm64.tgz");
    EXPECT_EQ(shim_spec_of(shim, "amd64")->fetch.url, "https://e.org/amd64.tgz");
    EXPECT_NE(error_of(shim, "riscv64").find("no entry for this node's architecture, riscv64"),
              std::string::npos);
}

TEST(ClusterShimObject, EveryBadFieldIsNamedWithTheObject) {
    struct Case {
        std::function<void(json&)> spoil;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {[](json& s) { s["spec"]["handler"] = "x]\n[y"; }, "Shim/spin-v2: spec.handler"},
        {[](json& s) { s["metadata"]["name"] = "Spin"; }, "metadata.name"},
        {[](json& s) {
             s["spec"].erase("runtimeType");
             s["spec"]["binary"] = "spin-shim";
         },
         "spec.binary is \"spin-shim\", which does not say the runtime type"},
        {[](json& s) { s["spec"]["runtimeType"] = "spin"; }, "spec.runtimeType"},
        {[](json& s) { s["spec"]["binary"] = "../../bin/sh"; }, "spec.binary"},
        {[](json& s) { s["spec"]["fetchStrategy"]["anonHttp"]["sha256"] = "abc"; },
         "spec.fetchStrategy.anonHttp.sha256 must be exactly 64"},
        {[](json& s) { s["spec"]["fetchStrategy"]["anonHttp"].erase("sha256"); },
         "spec.fetchStrategy.anonHttp.sha256 is missing"},
        {[](json& s) { s["spec"]["fetchStrategy"]["anonHttp"]["location"] = "ftp://x/y"; },
         "spec.fetchStrategy.anonHttp.location"},
        {[](json& s) { s["spec"]["fetchStrategy"]["platforms"] = json::array(); },
         "spec.fetchStrategy gives anonHttp and platforms: it needs exactly one of"},
        {[](json& s) { s["spec"]["fetchStrategy"]["type"] = "s3"; }, "spec.fetchStrategy.type"},
        {[](json& s) { s["spec"]["options"]["X"] = nullptr; }, "spec.options.X"},
        {[](json& s) { s["spec"]["runtimeClass"]["name"] = "A_B"; }, "spec.runtimeClass.name"},
        {[](json& s) { s.erase("spec"); }, "spec is required"},
    };
    for (const Case& c : cases) {
        json shim = good_shim();
        c.spoil(shim);
        const std::string message = error_of(shim);
        EXPECT_NE(message.find(c.expected), std::string::npos)
            << "expected \"" << c.expected << "\" in: " << message;
    }
}

TEST(ClusterShimObject, AnOciStrategyIsTheSameSpecAsTomlOci) {
    json shim = good_shim();
    const std::string reference = "registry.example.org:5000/shims/spin:1.0@sha256:" + k_sha;
    shim["spec"]["fetchStrategy"] = {{"type", "oci"},
                                     {"oci", {{"reference", reference}, {"path", "/usr/bin/x"}}}};
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->fetch.oci, reference);
    EXPECT_EQ(spec->fetch.path, "usr/bin/x");
    EXPECT_TRUE(spec->fetch.url.empty());
    EXPECT_FALSE(spec->fetch.sha256);

    shim["spec"]["fetchStrategy"]["oci"]["reference"] = "registry.example.org/shims/spin:1.0";
    EXPECT_NE(error_of(shim).find("spec.fetchStrategy.oci.reference has no @sha256: digest"),
              std::string::npos);
    shim["spec"]["fetchStrategy"]["oci"]["reference"] = "shims/spin@sha256:" + k_sha;
    EXPECT_NE(error_of(shim).find("is not a registry host"), std::string::npos);
    shim["spec"]["fetchStrategy"]["oci"]["reference"] = reference;
    shim["spec"]["fetchStrategy"]["oci"]["path"] = "a/../b";
    EXPECT_NE(error_of(shim).find("spec.fetchStrategy.oci.path"), std::string::npos);
    shim["spec"]["fetchStrategy"]["anonHttp"] = {{"location", "https://e.org/x"}};
    EXPECT_NE(error_of(shim).find("spec.fetchStrategy gives anonHttp and oci: it needs exactly "
                                  "one of"),
              std::string::npos);
}

TEST(ClusterShimObject, UnverifiedNeedsAllowUnverified) {
    json shim = good_shim();
    shim["spec"]["fetchStrategy"]["anonHttp"].erase("sha256");
    shim["spec"]["allowUnverified"] = true;
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_FALSE(spec->fetch.sha256);
    EXPECT_TRUE(spec->allow_unverified);
}

TEST(ClusterShimObject, NodeSelectorMatchesAllItsLabels) {
    json shim = good_shim();
    shim["spec"]["nodeSelector"] = {{"wasm", "true"}, {"zone", "a"}};
    EXPECT_TRUE(selects_node(shim, {{"wasm", "true"}, {"zone", "a"}, {"other", "x"}}));
    EXPECT_FALSE(selects_node(shim, {{"wasm", "true"}}));
    EXPECT_FALSE(selects_node(shim, {{"wasm", "false"}, {"zone", "a"}}));
}

TEST(ClusterShimObject, WithoutASelectorEveryNodeButTheControlPlane) {
    const json shim = good_shim();
    EXPECT_TRUE(selects_node(shim, {{"kubernetes.io/os", "linux"}}));
    EXPECT_FALSE(selects_node(shim, {{"node-role.kubernetes.io/control-plane", ""}}));
}

} // namespace cluster_shim_object
} // namespace
} // namespace shimkeeper::cluster::model
