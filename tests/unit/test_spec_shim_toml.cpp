// A ShimSpec written as a shims.d file reads back as the same spec through the loader, whatever
// its strings and options hold: the writer fuzz_shim_object relies on to hold the Shim object
// mapping to the loader.
#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/shim_toml.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace shimkeeper::spec {
namespace {
namespace spec_shim_toml {

ShimSpec read_back(const ShimSpec& shim, const std::string& arch, FetchForm form) {
    const std::string text = shims_d_toml_of(shim, arch, form);
    auto state = parse_desired_state_text(text, "shims.d/x.toml", arch, false);
    EXPECT_TRUE(state) << (state ? "" : state.error().message()) << "\n" << text;
    if (!state || state->shims.size() != 1) {
        return {};
    }
    return state->shims.front();
}

TEST(SpecShimToml, OptionsOfAnyShapeReadBackEqual) {
    ShimSpec shim;
    shim.name = "demo";
    shim.handler = "demo.h_1";
    shim.runtime_type = "/opt/shims/a\\b/containerd-shim-demo-v1";
    shim.binary = "other-binary";
    shim.version = "1.0 \"beta\"";
    shim.fetch.url = "https://example.org/a.tar.gz?x=\"1\"";
    shim.fetch.sha256 = std::string(64, 'a');
    toml::table nested{{"deeper", toml::table{}}, {"n", -3}};
    shim.options = toml::table{{"SystemdCgroup", true},
                               {"c\n\"q\\", "x\ty\x7f"},
                               {"", std::string("nul\0byte", 8)},
                               {"whole", 5.0},
                               {"negative_zero", -0.0},
                               {"tiny", 1e-7},
                               {"huge", std::numeric_limits<double>::infinity()},
                               {"list", toml::array{1, "two"}},
                               {"a.b", nested}};
    shim.runtime_class = RuntimeClassSpec{"demo-rc"};
    const ShimSpec back = read_back(shim, "amd64", FetchForm::single);
    EXPECT_EQ(back.handler, shim.handler);
    EXPECT_EQ(back.runtime_type, shim.runtime_type);
    EXPECT_EQ(back.binary, shim.binary);
    EXPECT_EQ(back.version, shim.version);
    EXPECT_EQ(back.options, shim.options);
    ASSERT_TRUE(back.options["whole"].is_floating_point()); // not read back as the integer 5
    EXPECT_TRUE(std::signbit(back.options["negative_zero"].value_or(0.0)));
    EXPECT_EQ(back.fetch.url, shim.fetch.url);
    EXPECT_EQ(back.fetch.sha256, shim.fetch.sha256);
    ASSERT_TRUE(back.runtime_class);
    EXPECT_EQ(back.runtime_class->name, "demo-rc");
}

TEST(SpecShimToml, AnUnpinnedOciSourceAsAPlatformEntryReadsBack) {
    ShimSpec shim;
    shim.name = "lunar";
    shim.handler = "lunar";
    shim.runtime_type = "io.containerd.lunar.v2";
    shim.binary = "containerd-shim-lunar-v2"; // implied by the runtime type: left out
    shim.allow_unverified = true;
    shim.fetch.oci = "registry.example.org/shims/lunar:1.0";
    shim.fetch.path = "usr/bin/containerd-shim-lunar-v2";
    const std::string text = shims_d_toml_of(shim, "arm64", FetchForm::platform);
    EXPECT_EQ(text.find("binary"), std::string::npos) << text;
    const ShimSpec back = read_back(shim, "arm64", FetchForm::platform);
    EXPECT_EQ(back.binary, shim.binary);
    EXPECT_TRUE(back.allow_unverified);
    EXPECT_EQ(back.fetch.oci, shim.fetch.oci);
    EXPECT_EQ(back.fetch.path, shim.fetch.path);
    EXPECT_FALSE(back.fetch.sha256);
    EXPECT_FALSE(back.runtime_class);
}

} // namespace spec_shim_toml
} // namespace
} // namespace shimkeeper::spec
