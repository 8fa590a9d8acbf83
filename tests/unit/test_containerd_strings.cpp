// The config engine reads TOML's strings as the grammar does: text inside any of the four string
// forms (and inside an array that spans lines) is the value's, never a table header, a key or one
// of shimkeeper's marker lines, however much it looks like one. Each case puts header-shaped and
// marker-shaped lines inside one form and checks what a user would see: the edit succeeds, the
// string keeps its value, a second edit changes nothing, and removing the shim gives the file
// back byte for byte.
#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/containerd/toml_tree.hpp"

#include "containerd_fixtures.hpp"

#include <gtest/gtest.h>

namespace sc = shimkeeper::containerd;

namespace {
namespace containerd_strings {

using sc::test::Adopt;
using sc::test::spin_runtime;
using sc::test::v2_target;

const std::string k_cri_header = "[plugins.\"io.containerd.grpc.v1.cri\"]\n";
const sc::KeyPath k_sandbox_image = {"plugins", "io.containerd.grpc.v1.cri", "sandbox_image"};

// Lines that look like what the scanner and the block reader look for.
const std::string k_lookalikes =
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]\n" +
    sc::begin_marker("spin-v2", std::string(64, 'a')) + "\n" +
    "  runtime_type = \"io.containerd.spin.v2\"\n" + sc::end_marker("spin-v2") + "\n" +
    "# shimkeeper:created base-sha256=" + std::string(64, 'b') + "\n" +
    sc::adopted_prefix("spin-v2") + "[x]\n" + "    " + sc::end_marker("other") + "\n";

std::string value_at(const std::string& text, const sc::KeyPath& path) {
    auto tree = sc::parse_toml(text, "test.toml");
    EXPECT_TRUE(tree.has_value()) << tree.error().message();
    if (!tree) {
        return "<unparsable>";
    }
    const toml::node* node = sc::find_node(*tree, path);
    return node != nullptr ? sc::format_value(*node) : "<absent>";
}

// The file holds `sandbox_image = <literal>`; the edit must treat all of it as that one value.
void expect_read_as_one_string(const std::string& literal, Adopt adopt = Adopt::no) {
    const std::string before =
        "version = 2\n" + k_cri_header + "  sandbox_image = " + literal + "\n";
    const std::string value = value_at(before, k_sandbox_image);
    ASSERT_NE(value, "<absent>");

    auto added = sc::edit_config_text(before, v2_target(), {spin_runtime(adopt)});
    ASSERT_TRUE(added.has_value()) << added.error().message();
    EXPECT_EQ(value_at(*added, k_sandbox_image), value);
    EXPECT_TRUE(added->starts_with(before)) << "text before the new block changed:\n" << *added;
    EXPECT_EQ(value_at(*added, {"plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes",
                                "spin", "runtime_type"}),
              "\"/var/lib/shimkeeper/bin/containerd-shim-spin-v2\"");

    auto again = sc::edit_config_text(*added, v2_target(), {spin_runtime(adopt)});
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(*again, *added) << "a second edit changed the file";

    auto removed = sc::edit_config_text(*added, v2_target(), {});
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, before);
}

TEST(ContainerdStrings, MultiLineBasicStringHoldsHeadersMarkersAndLiteralDelimiters) {
    expect_read_as_one_string("\"\"\"\n" + k_lookalikes + "'''\n\"\"\"");
}

TEST(ContainerdStrings, MultiLineBasicStringWithEscapedQuotesAndLineEndingBackslash) {
    expect_read_as_one_string("\"\"\"\\\n  " + k_lookalikes + "\\\"\"\" still inside \\\\\n" +
                              "\\\"\\\"\\\"\n# shimkeeper:end shim=spin-v2\n\"\"\"");
}

TEST(ContainerdStrings, MultiLineBasicStringEndingInExtraQuotes) {
    expect_read_as_one_string("\"\"\"\n" + k_lookalikes + "\"\"\"\"\"");
}

TEST(ContainerdStrings, MultiLineLiteralStringHoldsHeadersMarkersAndBasicDelimiters) {
    expect_read_as_one_string("'''\n" + k_lookalikes + "\"\"\" \\ '' \n'''");
}

TEST(ContainerdStrings, MultiLineLiteralStringEndingInExtraQuotes) {
    expect_read_as_one_string("'''\n" + k_lookalikes + "'''''");
}

TEST(ContainerdStrings, BasicStringHoldsHeaderAndMarkerText) {
    expect_read_as_one_string(
        "\"[a] # shimkeeper:begin shim=spin-v2 \\\"''' \\u0041\" # \"\"\" [b]");
}

TEST(ContainerdStrings, LiteralStringHoldsHeaderAndMarkerText) {
    expect_read_as_one_string("'[a] \"\"\" # shimkeeper:end shim=spin-v2 \\' # '''");
}

TEST(ContainerdStrings, ArraySpanningLinesHoldsMarkerCommentsAndHeaderStrings) {
    expect_read_as_one_string("[\n" + sc::begin_marker("spin-v2", std::string(64, 'a')) +
                              "\n  \"[plugins.x]\",\n  '''\n[y]\n''',\n" +
                              sc::end_marker("spin-v2") + "\n]");
}

TEST(ContainerdStrings, AdoptingAHandlerLeavesLookalikesInsideStringsAlone) {
    // The user's own spin handler is adopted (commented out) and restored on removal; the
    // adopted-line look-alike inside the string is neither restored nor commented.
    const std::string before =
        "version = 2\n" + k_cri_header + "  sandbox_image = '''\n" + k_lookalikes + "'''\n" +
        "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]\n" +
        "  runtime_type = \"io.containerd.runc.v2\"\n";
    const std::string value = value_at(before, k_sandbox_image);
    auto added = sc::edit_config_text(before, v2_target(), {spin_runtime(Adopt::yes)});
    ASSERT_TRUE(added.has_value()) << added.error().message();
    EXPECT_EQ(value_at(*added, k_sandbox_image), value);
    auto removed = sc::edit_config_text(*added, v2_target(), {});
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, before);
}

TEST(ContainerdStrings, AdoptingAMultiLineValueThatHoldsAMarkerLineIsRefused) {
    // Commenting out the statement would leave its marker-shaped line standing as a marker.
    std::string before = "version = 2\n";
    before += "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]\n";
    before += "  runtime_type = \"io.containerd.runc.v2\"\n";
    before += "  note = '''\n";
    before += sc::adopted_prefix("spin-v2");
    before += "x = 1\n'''\n";
    auto out = sc::edit_config_text(before, v2_target(), {spin_runtime(Adopt::yes)});
    ASSERT_FALSE(out.has_value()) << *out;
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::conflict);
    EXPECT_NE(out.error().message().find("config.toml:5:"), std::string::npos)
        << out.error().message();
    EXPECT_NE(out.error().message().find("adopt"), std::string::npos) << out.error().message();
}

TEST(ContainerdStrings, AnIndentedMarkerOutsideAnyStringIsStillRefused) {
    const std::string before =
        "version = 2\n" + k_cri_header + "  " + sc::end_marker("spin-v2") + "\n";
    auto out = sc::edit_config_text(before, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::conflict);
    EXPECT_NE(out.error().message().find("config.toml:3:"), std::string::npos)
        << out.error().message();
}

TEST(ContainerdStrings, StatementContinuationLinesAreThoseInsideAValue) {
    const auto lines = sc::split_lines("a = \"\"\"\n[x]\n\"\"\"\n[t]\nb = [\n 1,\n]\nc = 'x'\n");
    EXPECT_EQ(sc::continuation_lines(lines, sc::Masking::none),
              (std::vector<bool>{false, true, true, false, false, true, true, false}));
}

} // namespace containerd_strings
} // namespace
