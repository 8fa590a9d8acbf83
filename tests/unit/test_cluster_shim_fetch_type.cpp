// spec.fetchStrategy.type is optional: a Shim written as runtime-class-manager's samples write it
// (platforms, no type) is the same ShimSpec as one with type anonymousHttp; the source says the
// type when it is left out, and a type that disagrees with the source is refused naming both.
#include "shimkeeper/cluster/model/shim_object.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_shim_fetch_type {

using nlohmann::json;

const std::string k_sha(64, 'c');
const std::string k_reference = "registry.example.org/shims/spin:1.0@sha256:" + k_sha;

json shim_with(const json& fetch_strategy) {
    return {{"apiVersion", "containerd.x-k8s.io/v1alpha1"},
            {"kind", "Shim"},
            {"metadata", {{"name", "spin-v2"}, {"resourceVersion", "3"}}},
            {"spec",
             {{"fetchStrategy", fetch_strategy},
              {"runtimeClass", {{"name", "wasmtime-spin-v2"}, {"handler", "spin-v2"}}}}}};
}

json platforms() {
    return json::array({{{"os", "linux"},
                         {"arch", "aarch64"},
                         {"location", "http://127.0.0.1:8080/spin-aarch64.tar.gz"},
                         {"sha256", std::string(64, 'a')}},
                        {{"os", "linux"},
                         {"arch", "x86_64"},
                         {"location", "http://127.0.0.1:8080/spin-x86_64.tar.gz"},
                         {"sha256", k_sha}}});
}

json anon_http() {
    return {{"location", "https://example.org/spin.tar.gz"}, {"sha256", k_sha}};
}

std::string error_of(const json& shim) {
    auto spec = shim_spec_of(shim, "amd64");
    EXPECT_FALSE(spec) << "accepted: " << shim.dump();
    return spec ? std::string() : spec.error().message();
}

TEST(ClusterShimFetchType, PlatformsWithoutTypeAreFetchedOverHttp) {
    auto spec = shim_spec_of(shim_with({{"platforms", platforms()}}), "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->fetch.url, "http://127.0.0.1:8080/spin-x86_64.tar.gz");
    EXPECT_EQ(spec->fetch.sha256, k_sha);
    EXPECT_TRUE(spec->fetch.oci.empty());
}

TEST(ClusterShimFetchType, AnonHttpWithoutTypeIsFetchedOverHttp) {
    auto spec = shim_spec_of(shim_with({{"anonHttp", anon_http()}}), "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->fetch.url, "https://example.org/spin.tar.gz");
    EXPECT_EQ(spec->fetch.sha256, k_sha);
    EXPECT_TRUE(spec->fetch.oci.empty());
}

TEST(ClusterShimFetchType, OciWithoutTypeIsFetchedFromTheRegistry) {
    auto spec = shim_spec_of(
        shim_with({{"oci", {{"reference", k_reference}, {"path", "containerd-shim-spin-v2"}}}}),
        "amd64");
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->fetch.oci, k_reference);
    EXPECT_EQ(spec->fetch.path, "containerd-shim-spin-v2");
    EXPECT_TRUE(spec->fetch.url.empty());
}

TEST(ClusterShimFetchType, ATypeThatAgreesWithTheSourceIsTheSameSpecAsNone) {
    const std::vector<std::pair<json, json>> pairs = {
        {{{"platforms", platforms()}}, {{"type", "anonymousHttp"}, {"platforms", platforms()}}},
        {{{"platforms", platforms()}}, {{"type", "annonymousHttp"}, {"platforms", platforms()}}},
        {{{"anonHttp", anon_http()}}, {{"type", "anonymousHttp"}, {"anonHttp", anon_http()}}},
        {{{"anonHttp", anon_http()}}, {{"type", "annonymousHttp"}, {"anonHttp", anon_http()}}},
        {{{"oci", {{"reference", k_reference}}}},
         {{"type", "oci"}, {"oci", {{"reference", k_reference}}}}},
    };
    for (const auto& [inferred, written] : pairs) {
        auto a = shim_spec_of(shim_with(inferred), "amd64");
        auto b = shim_spec_of(shim_with(written), "amd64");
        ASSERT_TRUE(a) << a.error().message();
        ASSERT_TRUE(b) << b.error().message();
        EXPECT_EQ(a->fetch.url, b->fetch.url) << written.dump();
        EXPECT_EQ(a->fetch.sha256, b->fetch.sha256) << written.dump();
        EXPECT_EQ(a->fetch.oci, b->fetch.oci) << written.dump();
    }
    // platforms take the written type: type oci makes them OCI entries.
    auto oci = shim_spec_of(
        shim_with({{"type", "oci"},
                   {"platforms", json::array({{{"arch", "amd64"}, {"reference", k_reference}}})}}),
        "amd64");
    ASSERT_TRUE(oci) << oci.error().message();
    EXPECT_EQ(oci->fetch.oci, k_reference);
}

TEST(ClusterShimFetchType, ATypeThatDisagreesWithTheSourceIsRefusedNamingBoth) {
    EXPECT_EQ(error_of(shim_with({{"type", "oci"}, {"anonHttp", anon_http()}})),
              "Shim/spin-v2: spec.fetchStrategy.type is \"oci\" but spec.fetchStrategy.anonHttp "
              "is an anonymousHttp source: they must agree (or leave type out: the source says "
              "it)");
    EXPECT_EQ(
        error_of(shim_with({{"type", "annonymousHttp"}, {"oci", {{"reference", k_reference}}}})),
        "Shim/spin-v2: spec.fetchStrategy.type is \"annonymousHttp\" but "
        "spec.fetchStrategy.oci is an oci source: they must agree (or leave type out: the "
        "source says it)");
    // Without type, platforms entries are anonymousHttp ones; an OCI entry says what to write.
    const std::string message = error_of(
        shim_with({{"platforms", json::array({{{"arch", "amd64"}, {"reference", k_reference}}})}}));
    EXPECT_EQ(message, "Shim/spin-v2: spec.fetchStrategy.platforms[0].reference belongs to oci "
                       "entries, but spec.fetchStrategy has no type, and platforms means "
                       "anonymousHttp (write type: oci for reference and path)");
    EXPECT_EQ(error_of(shim_with({{"type", "oci"}, {"platforms", platforms()}})),
              "Shim/spin-v2: spec.fetchStrategy.platforms[0].location belongs to anonymousHttp "
              "entries, but spec.fetchStrategy.type is \"oci\"");
}

TEST(ClusterShimFetchType, NoSourceIsRefusedWithOrWithoutType) {
    const std::string expected = "Shim/spin-v2: spec.fetchStrategy has no source: give anonHttp "
                                 "(one URL for every node), oci (one OCI reference for every "
                                 "node) or platforms (one per architecture)";
    EXPECT_EQ(error_of(shim_with(json::object())).rfind(expected, 0), 0u);
    EXPECT_EQ(error_of(shim_with({{"type", "anonymousHttp"}})).rfind(expected, 0), 0u);
    EXPECT_EQ(error_of(shim_with({{"type", "oci"}})).rfind(expected, 0), 0u);
}

TEST(ClusterShimFetchType, AnUnknownTypeIsRefusedEvenWithASource) {
    EXPECT_EQ(error_of(shim_with({{"type", "s3"}, {"platforms", platforms()}})),
              "Shim/spin-v2: spec.fetchStrategy.type is \"s3\"; this node knows anonymousHttp "
              "and oci (or leave type out: the source says it)");
    EXPECT_EQ(error_of(shim_with({{"type", 7}, {"platforms", platforms()}})),
              "Shim/spin-v2: spec.fetchStrategy.type must be a string, not number");
}

} // namespace cluster_shim_fetch_type
} // namespace
} // namespace shimkeeper::cluster::model
