// Joining desired-state sources: one set-level check for all of them; a cluster source yields to
// the node's own files on a clash, but a clash within itself is still an error.
#include "shimkeeper/spec/sources.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::spec {
namespace {
namespace spec_sources {

ShimSpec shim(const std::string& name, const std::string& handler, const std::string& origin) {
    ShimSpec s;
    s.name = name;
    s.handler = handler;
    s.binary = "containerd-shim-" + name + "-v2";
    s.location = {origin, 0, 0};
    return s;
}

class ListSource : public DesiredSource {
public:
    ListSource(std::vector<ShimSpec> shims, bool yields)
        : m_shims(std::move(shims)), m_yields(yields) {}
    util::Expected<DesiredShims> load() override { return DesiredShims{m_shims, {}, {}}; }
    bool yields_on_conflict() const override { return m_yields; }

private:
    std::vector<ShimSpec> m_shims;
    bool m_yields;
};

TEST(SpecSources, AClashBetweenFilesIsAnError) {
    ListSource a({shim("spin", "spin", "a.toml")}, false);
    ListSource b({shim("other", "spin", "b.toml")}, false);
    auto all = gather({&a, &b});
    ASSERT_FALSE(all);
    EXPECT_NE(all.error().message().find("handler 'spin'"), std::string::npos);
}

TEST(SpecSources, TwoShimsWithOneBinaryAreRefusedWhateverTheirSources) {
    ListSource a({shim("spin", "spin", "a.toml")}, false);
    auto twin = shim("twin", "twin", "b.toml");
    twin.binary = "containerd-shim-spin-v2";
    ListSource b({twin}, false);
    auto all = gather({&a, &b});
    ASSERT_FALSE(all);
    EXPECT_NE(all.error().message().find("binary 'containerd-shim-spin-v2'"), std::string::npos);
}

TEST(SpecSources, AClusterObjectYieldsToTheNodesFileWithAWarning) {
    ListSource files({shim("spin", "spin", "shims.d/spin.toml")}, false);
    ListSource cluster({shim("spin", "spin", "Shim/spin@1"), shim("kata", "kata", "Shim/kata@2")},
                       true);
    auto all = gather({&files, &cluster});
    ASSERT_TRUE(all) << all.error().message();
    ASSERT_EQ(all->shims.size(), 2u);
    EXPECT_EQ(all->shims[0].location.file, "shims.d/spin.toml");
    EXPECT_EQ(all->shims[1].name, "kata");
    ASSERT_EQ(all->warnings.size(), 1u);
    EXPECT_NE(all->warnings[0].find("the node's own file wins"), std::string::npos);
}

TEST(SpecSources, AClashWithinTheClusterSourceIsStillAnError) {
    ListSource files({}, false);
    ListSource cluster({shim("a", "same", "Shim/a@1"), shim("b", "same", "Shim/b@1")}, true);
    EXPECT_FALSE(gather({&files, &cluster}));
}

} // namespace spec_sources
} // namespace
} // namespace shimkeeper::spec
