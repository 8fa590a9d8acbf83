// The Shim spellings of the shim lifecycle operator proposal and of runtime-class-manager, read
// into the same ShimSpec as shimkeeper's own: runtimeclass, runtimeClass.handler,
// containerdRuntimeOptions, platforms[].os, and no runtimeType. Two spellings of one field are
// refused, each error naming the field.
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/sources.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_shim_styles {

using nlohmann::json;

const std::string k_sha(64, 'c');

// Written the way runtime-class-manager's users write a Shim (its field names, our words).
json manager_style() {
    return json::parse(R"({
      "apiVersion": "containerd.x-k8s.io/v1alpha1", "kind": "Shim",
      "metadata": {"name": "lunar-v1", "resourceVersion": "7"},
      "spec": {
        "nodeSelector": {"lunar": "yes"},
        "fetchStrategy": {"type": "anonymousHttp", "platforms": [
          {"os": "linux", "arch": "x86_64", "location": "https://e.org/lunar-x86_64.tgz",
           "sha256": ")" +
                       k_sha + R"("},
          {"os": "linux", "arch": "aarch64", "location": "https://e.org/lunar-aarch64.tgz",
           "sha256": ")" +
                       k_sha + R"("}]},
        "runtimeClass": {"name": "lunar", "handler": "lunar"},
        "rolloutStrategy": {"type": "recreate"},
        "containerdRuntimeOptions": {"Verbose": "true", "Quiet": "false", "Threads": "4",
                                     "Ratio": "0.5", "Mode": "fast", "Huge": "99999999999999999999",
                                     "Umask": "0022", "Scale": "-1.5e3", "Plus": "+4"}
      }})");
}

// Written the way the proposal's example writes one: runtimeclass all lowercase.
json proposal_style() {
    return json::parse(R"({
      "apiVersion": "containerd.x-k8s.io/v1alpha1", "kind": "Shim",
      "metadata": {"name": "comet-v2"},
      "spec": {
        "fetchStrategy": {"type": "annonymousHttp",
                          "anonHttp": {"location": "https://e.org/comet.tar.gz",
                                       "sha256": ")" +
                       k_sha + R"("}},
        "runtimeclass": {"name": "comet-rc", "handler": "comet"},
        "rolloutStrategy": {"type": "rolling", "rolling": {"maxUpdate": 2}}
      }})");
}

std::string error_of(const json& shim, const std::string& arch = "amd64") {
    auto spec = shim_spec_of(shim, arch);
    EXPECT_FALSE(spec) << "accepted: " << shim.dump();
    return spec ? std::string() : spec.error().message();
}

void expect_error(const json& shim, const std::string& expected) {
    const std::string message = error_of(shim);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "expected \"" << expected << "\" in: " << message;
}

TEST(ClusterShimStyles, ABinaryNameSaysItsRuntimeType) {
    EXPECT_EQ(spec::runtime_type_said_by_binary("containerd-shim-spin-v2"),
              "io.containerd.spin.v2");
    EXPECT_EQ(spec::runtime_type_said_by_binary("containerd-shim-kata-qemu-v2"),
              "io.containerd.kata-qemu.v2");
    EXPECT_EQ(spec::runtime_type_said_by_binary("containerd-shim-wasmtime-v1"),
              "io.containerd.wasmtime.v1");
    for (const char* silent :
         {"containerd-shim-spin", "containerd-shim--v2", "spin-v2", "containerd-shim-spin-v",
          "containerd-shim-spin-vx", "containerd-shim-Spin-v2", "containerd-shim-a.b-v2",
          "containerd-shim-spin-v2.exe", "containerd-shim-spin-v2 "}) {
        EXPECT_FALSE(spec::runtime_type_said_by_binary(silent)) << silent;
    }
}

TEST(ClusterShimStyles, RuntimeClassManagerStyleIsTheSameSpec) {
    auto spec = shim_spec_of(manager_style(), "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->handler, "lunar");
    ASSERT_TRUE(spec->runtime_class);
    EXPECT_EQ(spec->runtime_class->name, "lunar");
    EXPECT_EQ(spec->fetch.url, "https://e.org/lunar-x86_64.tgz"); // x86_64 is amd64
    EXPECT_EQ(shim_spec_of(manager_style(), "arm64")->fetch.url, "https://e.org/lunar-aarch64.tgz");
    // String options typed the way containerd's TOML needs them.
    EXPECT_EQ(spec->options["Verbose"].value<bool>(), true);
    EXPECT_EQ(spec->options["Quiet"].value<bool>(), false);
    EXPECT_EQ(spec->options["Threads"].value<std::int64_t>(), 4);
    EXPECT_EQ(spec->options["Ratio"].value<double>(), 0.5);
    EXPECT_EQ(spec->options["Mode"].value<std::string>(), "fast");
    EXPECT_EQ(spec->options["Huge"].value<std::string>(), "99999999999999999999");
    EXPECT_EQ(spec->options["Umask"].value<std::string>(), "0022");
    EXPECT_EQ(spec->options["Scale"].value<double>(), -1500.0);
    EXPECT_EQ(spec->options["Plus"].value<std::string>(), "+4");
}

TEST(ClusterShimStyles, ProposalStyleIsTheSameSpec) {
    auto spec = shim_spec_of(proposal_style(), "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->handler, "comet");
    ASSERT_TRUE(spec->runtime_class);
    EXPECT_EQ(spec->runtime_class->name, "comet-rc");
    auto identity = shim_identity_of(proposal_style());
    ASSERT_TRUE(identity) << identity.error().message();
    EXPECT_EQ(identity->runtime_class, "comet-rc");
    EXPECT_EQ(identity->handler, "comet");
}

TEST(ClusterShimStyles, WithoutRuntimeTypeTheArtifactDecidesAndTheHandlerGuessesMeanwhile) {
    auto spec = shim_spec_of(proposal_style(), "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_TRUE(spec->runtime_type_from_artifact);
    EXPECT_EQ(spec->runtime_type, "io.containerd.comet.v2");
    EXPECT_EQ(spec->binary, "containerd-shim-comet-v2");
    EXPECT_NE(spec->runtime_type_derivation.find("to be derived from the artifact"),
              std::string::npos)
        << spec->runtime_type_derivation;
}

TEST(ClusterShimStyles, TheHandlersGuessIsAValidRuntimeTypeForAnyHandler) {
    json shim = proposal_style();
    shim["spec"]["runtimeclass"]["handler"] = "a..b";
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->runtime_type, "io.containerd.a--b.v2");
    EXPECT_FALSE(spec::runtime_type_problem(spec->runtime_type));
    EXPECT_EQ(spec->binary, "containerd-shim-a--b-v2");
}

// Handlers a.b and a-b guess the same binary; only their artifacts can tell whether they clash
// (checked again after derivation), so the guesses are no conflict.
TEST(ClusterShimStyles, TwoGuessesOfOneBinaryAreNoConflictYet) {
    json one = proposal_style();
    one["spec"]["runtimeclass"]["handler"] = "a.b";
    json two = proposal_style();
    two["metadata"]["name"] = "other";
    two["spec"]["runtimeclass"] = {{"name", "other"}, {"handler", "a-b"}};
    auto first = shim_spec_of(one, "amd64");
    auto second = shim_spec_of(two, "amd64");
    ASSERT_TRUE(first && second);
    ASSERT_EQ(first->binary, second->binary);
    EXPECT_TRUE(spec::check_unique({*first}, *second));
    second->runtime_type_from_artifact = false; // a binary written in the spec clashes at once
    first->runtime_type_from_artifact = false;
    EXPECT_FALSE(spec::check_unique({*first}, *second));
}

TEST(ClusterShimStyles, WithoutRuntimeTypeABinaryNameSaysIt) {
    json shim = proposal_style();
    shim["spec"]["binary"] = "containerd-shim-comet-v1";
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_FALSE(spec->runtime_type_from_artifact);
    EXPECT_EQ(spec->runtime_type, "io.containerd.comet.v1");
    EXPECT_EQ(spec->runtime_type_derivation, "derived from spec.binary containerd-shim-comet-v1");
    shim["spec"]["binary"] = "comet";
    expect_error(shim, "Shim/comet-v2: spec.binary is \"comet\", which does not say the runtime "
                       "type (containerd-shim-<name>-v<N>); set spec.runtimeType");
}

TEST(ClusterShimStyles, AWrittenRuntimeTypeIsNotDerived) {
    json shim = proposal_style();
    shim["spec"]["runtimeType"] = "io.containerd.comet.v3";
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_FALSE(spec->runtime_type_from_artifact);
    EXPECT_EQ(spec->runtime_type, "io.containerd.comet.v3");
    EXPECT_TRUE(spec->runtime_type_derivation.empty());
}

TEST(ClusterShimStyles, TwoSpellingsOfOneFieldAreRefused) {
    json shim = proposal_style();
    shim["spec"]["runtimeClass"] = {{"name", "comet-rc"}};
    expect_error(shim, "Shim/comet-v2: spec.runtimeclass and spec.runtimeClass are two "
                       "spellings of one field; keep one");
    EXPECT_FALSE(shim_identity_of(shim)); // the coordinator refuses it too

    shim = manager_style();
    shim["spec"]["options"] = {{"Verbose", true}};
    expect_error(shim, "Shim/lunar-v1: spec.containerdRuntimeOptions and spec.options both set "
                       "the runtime's options; keep one");
}

TEST(ClusterShimStyles, TheHandlerWrittenTwiceMustAgree) {
    json shim = manager_style();
    shim["spec"]["handler"] = "lunar";
    ASSERT_TRUE(shim_spec_of(shim, "amd64"));
    shim["spec"]["handler"] = "solar";
    expect_error(shim, "Shim/lunar-v1: spec.runtimeClass.handler is \"lunar\" but spec.handler "
                       "is \"solar\"");
    shim = proposal_style();
    shim["spec"]["handler"] = "meteor";
    expect_error(shim, "spec.runtimeclass.handler is \"comet\" but spec.handler is \"meteor\"");
    shim = proposal_style();
    shim["spec"]["runtimeclass"]["handler"] = "Comet";
    expect_error(shim, "spec.runtimeclass.handler is \"Comet\": it becomes a key in containerd's "
                       "config");
}

TEST(ClusterShimStyles, OnlyLinuxPlatformsAreAccepted) {
    json shim = manager_style();
    shim["spec"]["fetchStrategy"]["platforms"][1]["os"] = "windows";
    expect_error(shim, "Shim/lunar-v1: spec.fetchStrategy.platforms[1].os is \"windows\": "
                       "shimkeeper installs shims on Linux nodes only");
    shim["spec"]["fetchStrategy"]["platforms"][1].erase("os");
    EXPECT_TRUE(shim_spec_of(shim, "amd64"));
}

// Found by fuzz_shim_object: json::value() threw on a metadata.name that is no string.
TEST(ClusterShimStyles, MetadataOfAnotherShapeIsAnErrorNotAnException) {
    for (const json& metadata : {json({{"name", {{"type", "anonymousHttp"}}}}), json(7),
                                 json({{"name", "comet-v2"}, {"resourceVersion", 12}})}) {
        json shim = proposal_style();
        shim["metadata"] = metadata;
        auto spec = shim_spec_of(shim, "amd64");
        if (spec) {
            EXPECT_EQ(spec->location.to_string(), "Shim/comet-v2@?");
        } else {
            EXPECT_NE(spec.error().message().find("Shim/<unnamed>: metadata.name"),
                      std::string::npos)
                << spec.error().message();
        }
    }
}

TEST(ClusterShimStyles, AnIntegerTooLargeForTomlIsRefused) {
    json shim = proposal_style();
    shim["spec"]["options"] = {{"Big", 18446744073709551615ull}, {"Fine", 9223372036854775807ll}};
    expect_error(shim, "spec.options.Big is larger than a TOML integer can hold");
    shim["spec"]["options"].erase("Big");
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->options["Fine"].value<std::int64_t>(), 9223372036854775807ll);
}

TEST(ClusterShimStyles, StringOptionsOfAnyLengthAreTypedWithoutRecursion) {
    // 30,000 digits overflowed the stack of std::regex (fuzz_shim_object's
    // regress-long-number-option); scanned by hand they are a string, too long for any number.
    json shim = manager_style();
    const std::string digits(30000, '8');
    shim["spec"]["containerdRuntimeOptions"] = {{"Long", digits}, {"LongFloat", "1." + digits},
                                                {"Exp", "2e-3"},  {"Dot", "1."},
                                                {"Lead", "01.5"}, {"E", "1e"},
                                                {"Minus", "-0"},  {"Dash", "-"}};
    auto spec = shim_spec_of(shim, "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->options["Long"].value<std::string>(), digits);
    EXPECT_EQ(spec->options["LongFloat"].value<double>(), 1.8888888888888888);
    EXPECT_EQ(spec->options["Exp"].value<double>(), 0.002);
    EXPECT_EQ(spec->options["Dot"].value<std::string>(), "1.");
    EXPECT_EQ(spec->options["Lead"].value<std::string>(), "01.5");
    EXPECT_EQ(spec->options["E"].value<std::string>(), "1e");
    EXPECT_EQ(spec->options["Minus"].value<std::int64_t>(), 0);
    EXPECT_EQ(spec->options["Dash"].value<std::string>(), "-");
}

TEST(ClusterShimStyles, StringOptionsMustBeStrings) {
    json shim = manager_style();
    shim["spec"]["containerdRuntimeOptions"]["Verbose"] = true;
    expect_error(shim, "spec.containerdRuntimeOptions.Verbose must be a string");
}

TEST(ClusterShimStyles, AMissingSha256NamesThatFieldAndWhy) {
    json shim = manager_style();
    shim["spec"]["fetchStrategy"]["platforms"][1].erase("sha256");
    expect_error(shim, "Shim/lunar-v1: spec.fetchStrategy.platforms[1].sha256 is missing: the "
                       "shim runs as root on every selected node, so shimkeeper installs only "
                       "bytes it can verify; add the artifact's sha256, or set "
                       "spec.allowUnverified: true");
    shim["spec"]["allowUnverified"] = true;
    EXPECT_TRUE(shim_spec_of(shim, "arm64"));
}

TEST(ClusterShimStyles, TheStatusSaysTheSpecInOneSpelling) {
    EXPECT_EQ(spec_status_fields(proposal_style()),
              json({{"runtimeClass", "comet-rc"},
                    {"handler", "comet"},
                    {"runtimeTypeFrom",
                     "each node's artifact: the name of its containerd-shim-<name>-v<N> binary"}}));
    json shim = manager_style();
    shim["spec"]["binary"] = "containerd-shim-lunar-v1";
    EXPECT_EQ(spec_status_fields(shim),
              json({{"runtimeClass", "lunar"},
                    {"handler", "lunar"},
                    {"runtimeType", "io.containerd.lunar.v1"},
                    {"runtimeTypeFrom", "derived from spec.binary containerd-shim-lunar-v1"}}));
    shim["spec"]["runtimeType"] = "io.containerd.lunar.v2";
    EXPECT_EQ(spec_status_fields(shim)["runtimeTypeFrom"], "spec.runtimeType");
}

} // namespace cluster_shim_styles
} // namespace
} // namespace shimkeeper::cluster::model
