// Golden tests of the pure config edit over the fixture corpus (tests/fixtures/containerd):
// each edit is compared with a golden file, and removing the shims again gives back the input
// byte for byte. SHIMKEEPER_UPDATE_GOLDENS=1 rewrites the goldens (review them with git diff).
#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/diff.hpp"
#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/containerd/toml_tree.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "unit/source_dir.hpp"

#include <cstdlib>
#include <gtest/gtest.h>

namespace sc = shimkeeper::containerd;
namespace fs = std::filesystem;

namespace {
namespace containerd_edit {

const fs::path k_fixtures = shimkeeper::testing::source_dir() / "tests/fixtures/containerd";

std::string read_fixture(const std::string& name) {
    auto text = shimkeeper::util::read_file(k_fixtures / "input" / name);
    EXPECT_TRUE(text.has_value()) << name;
    return text.value_or("");
}

sc::DesiredRuntime spin() {
    sc::DesiredRuntime r;
    r.shim_name = "spin-v2";
    r.handler = "spin";
    r.runtime_type = "io.containerd.spin.v2";
    r.binary_node_path = "/var/lib/shimkeeper/bin/containerd-shim-spin-v2";
    r.digest = std::string(64, 'a');
    return r;
}

sc::DesiredRuntime crun() {
    sc::DesiredRuntime r;
    r.shim_name = "crun";
    r.handler = "crun.fast";
    r.runtime_type = "io.containerd.runc.v2";
    r.binary_node_path = "/var/lib/shimkeeper/bin/containerd-shim-runc-v2";
    r.digest = std::string(64, 'b');
    r.options.insert("BinaryName", "/usr/bin/crun");
    return r;
}

sc::EditTarget target_for(int version, sc::Pointing pointing = sc::Pointing::absolute_type,
                          sc::Masking masking = sc::Masking::none) {
    sc::EditTarget t;
    t.label = "/etc/containerd/config.toml";
    t.runtimes_path = sc::runtimes_path(version);
    t.pointing = pointing;
    t.masking = masking;
    return t;
}

void expect_golden(const std::string& name, const std::string& actual) {
    fs::path golden = k_fixtures / "golden" / (name + ".golden");
    if (std::getenv("SHIMKEEPER_UPDATE_GOLDENS") != nullptr) {
        ASSERT_TRUE(shimkeeper::util::write_file_atomic(golden, actual).has_value());
        return;
    }
    auto expected = shimkeeper::util::read_file(golden);
    ASSERT_TRUE(expected.has_value()) << "missing golden " << golden;
    EXPECT_EQ(*expected, actual) << "golden " << golden << " differs";
}

struct GoldenCase {
    std::string fixture;
    int version;
    sc::Pointing pointing;
    sc::Masking masking;
};

class EditGolden : public testing::TestWithParam<GoldenCase> {};

TEST_P(EditGolden, AddsBlocksMatchingTheGoldenAndRemovesThemByteForByte) {
    const GoldenCase& c = GetParam();
    std::string input = read_fixture(c.fixture);
    auto target = target_for(c.version, c.pointing, c.masking);
    std::string pointing = c.pointing == sc::Pointing::runtime_path ? "runtime_path" : "abs";

    auto added = sc::edit_config_text(input, target, {spin(), crun()});
    ASSERT_TRUE(added.has_value()) << added.error().message();
    expect_golden(c.fixture + "." + pointing, *added);

    // Idempotent: the same desired set changes nothing.
    auto again = sc::edit_config_text(*added, target, {spin(), crun()});
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(*added, *again);

    // Removing one shim deletes exactly its block.
    auto one_left = sc::edit_config_text(*added, target, {spin()});
    ASSERT_TRUE(one_left.has_value()) << one_left.error().message();
    EXPECT_EQ(one_left->find("shim=crun"), std::string::npos);
    EXPECT_NE(one_left->find("shim=spin-v2"), std::string::npos);

    // Removing every shim gives back the input byte for byte (a missing final newline stays
    // added: that is the one byte an edit cannot take back).
    auto removed = sc::edit_config_text(*one_left, target, {});
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    std::string expected = input;
    if (!expected.empty() && !expected.ends_with('\n')) {
        expected += "\n";
    }
    EXPECT_EQ(expected, *removed);
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, EditGolden,
    testing::Values(GoldenCase{"v1.toml", 1, sc::Pointing::absolute_type, sc::Masking::none},
                    GoldenCase{"v2.toml", 2, sc::Pointing::absolute_type, sc::Masking::none},
                    GoldenCase{"v2.toml", 2, sc::Pointing::runtime_path, sc::Masking::none},
                    GoldenCase{"v3.toml", 3, sc::Pointing::runtime_path, sc::Masking::none},
                    GoldenCase{"v4.toml", 4, sc::Pointing::runtime_path, sc::Masking::none},
                    GoldenCase{"imports.toml", 3, sc::Pointing::runtime_path, sc::Masking::none},
                    GoldenCase{"comments.toml", 2, sc::Pointing::absolute_type, sc::Masking::none},
                    GoldenCase{"crlf.toml", 2, sc::Pointing::absolute_type, sc::Masking::none},
                    GoldenCase{"k3s_config.toml.tmpl", 2, sc::Pointing::runtime_path,
                               sc::Masking::go_template},
                    GoldenCase{"microk8s_containerd-template.toml", 2, sc::Pointing::absolute_type,
                               sc::Masking::none}),
    [](const testing::TestParamInfo<GoldenCase>& param_info) {
        std::string name =
            param_info.param.fixture + "_" +
            (param_info.param.pointing == sc::Pointing::runtime_path ? "path" : "abs");
        for (char& ch : name) {
            if (!std::isalnum(static_cast<unsigned char>(ch))) {
                ch = '_';
            }
        }
        return name;
    });

TEST(ContainerdEdit, CrlfFileGetsCrlfBlocks) {
    auto out = sc::edit_config_text(read_fixture("crlf.toml"), target_for(2), {spin()});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    for (const auto& line : sc::split_lines(*out)) {
        EXPECT_TRUE(line.ends_with("\r\n")) << "line without CRLF: " << line;
    }
}

TEST(ContainerdEdit, RunctypedHandlerInheritsSystemdCgroupFromTheDefaultRuntime) {
    auto out = sc::edit_config_text(read_fixture("v2.toml"), target_for(2), {crun()});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    auto tree = toml::parse(*out);
    auto* options = sc::find_table(tree, {"plugins", "io.containerd.grpc.v1.cri", "containerd",
                                          "runtimes", "crun.fast", "options"});
    ASSERT_NE(options, nullptr);
    EXPECT_EQ(options->get("SystemdCgroup")->value<bool>(), true);
    EXPECT_EQ(options->get("BinaryName")->value<std::string>(), "/usr/bin/crun");

    auto spec_says_no = crun();
    spec_says_no.options.insert_or_assign("SystemdCgroup", false);
    out = sc::edit_config_text(read_fixture("v2.toml"), target_for(2), {spec_says_no});
    ASSERT_TRUE(out.has_value());
    EXPECT_NE(out->find("SystemdCgroup = false"), std::string::npos);
}

TEST(ContainerdEdit, PointingFollowsTheContainerdVersion) {
    auto abs = sc::edit_config_text("version = 2\n", target_for(2), {spin()});
    ASSERT_TRUE(abs.has_value());
    EXPECT_NE(abs->find("runtime_type = \"/var/lib/shimkeeper/bin/containerd-shim-spin-v2\""),
              std::string::npos);
    EXPECT_EQ(abs->find("runtime_path"), std::string::npos);

    auto path =
        sc::edit_config_text("version = 2\n", target_for(2, sc::Pointing::runtime_path), {spin()});
    ASSERT_TRUE(path.has_value());
    EXPECT_NE(path->find("runtime_type = \"io.containerd.spin.v2\""), std::string::npos);
    EXPECT_NE(path->find("runtime_path = \"/var/lib/shimkeeper/bin/containerd-shim-spin-v2\""),
              std::string::npos);
    EXPECT_EQ(sc::choose_pointing(std::nullopt), sc::Pointing::absolute_type);
    EXPECT_EQ(sc::choose_pointing(sc::ContainerdVersion{1, 6, 20}), sc::Pointing::absolute_type);
    EXPECT_EQ(sc::choose_pointing(sc::ContainerdVersion{1, 7, 0}), sc::Pointing::runtime_path);
}

TEST(ContainerdEdit, DigestChangeRewritesTheBlockInPlace) {
    auto first = sc::edit_config_text(read_fixture("v2.toml"), target_for(2), {spin()});
    ASSERT_TRUE(first.has_value());
    std::string with_trailer = *first + "# trailer the user wrote after our block\n";
    auto upgraded = spin();
    upgraded.digest = std::string(64, 'c');
    auto second = sc::edit_config_text(with_trailer, target_for(2), {upgraded});
    ASSERT_TRUE(second.has_value()) << second.error().message();
    EXPECT_NE(second->find("digest=sha256:" + std::string(64, 'c')), std::string::npos);
    EXPECT_EQ(second->find("digest=sha256:" + std::string(64, 'a')), std::string::npos);
    EXPECT_TRUE(second->ends_with("# trailer the user wrote after our block\n"));
}

} // namespace containerd_edit
} // namespace

namespace {
namespace containerd_edit {

TEST(ContainerdEdit, DefaultRuncIsAddedWhenTheFileLacksItAndLeavesWithTheLastShim) {
    // containerd 1.6 drops its built-in runc once a config names any runtime (CRI then fails
    // to load: seen in test_containerd_daemon), so the engine names runc too.
    std::string input = "version = 2\n";
    auto out = sc::edit_config_text(input, target_for(2), {spin()});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    auto tree = toml::parse(*out);
    auto* runc = sc::find_table(
        tree, {"plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes", "runc"});
    ASSERT_NE(runc, nullptr) << *out;
    EXPECT_EQ(runc->get("runtime_type")->value<std::string>(), "io.containerd.runc.v2");

    auto removed = sc::edit_config_text(*out, target_for(2), {});
    ASSERT_TRUE(removed.has_value());
    EXPECT_EQ(*removed, input);

    // A file that defines runc itself gets no second one.
    auto own = sc::edit_config_text(read_fixture("v2.toml"), target_for(2), {spin()});
    ASSERT_TRUE(own.has_value());
    EXPECT_EQ(own->find("@default-runtime"), std::string::npos);
}

} // namespace containerd_edit
} // namespace

namespace {
namespace containerd_edit {

TEST(ContainerdDiff, HunksHaveThreeLinesOfContext) {
    sc::FileChange change{"/etc/c.toml", "a\nb\nc\nd\ne\nf\ng\nh\ni\n",
                          "a\nb\nc\nd\nX\nf\ng\nh\ni\n", false};
    EXPECT_EQ(sc::unified_diff(change), "--- a/etc/c.toml\n+++ b/etc/c.toml\n"
                                        "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+X\n f\n g\n h\n");
    change.after = std::nullopt;
    change.before = "x\r\ny\r\n";
    EXPECT_EQ(sc::unified_diff(change),
              "--- a/etc/c.toml\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n");
    change.after = change.before;
    EXPECT_EQ(sc::unified_diff(change), "");
}

} // namespace containerd_edit
} // namespace
