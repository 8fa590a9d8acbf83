// What the config edit refuses, and how it says so: a user's handler, inline or dotted runtimes,
// broken markers, invalid TOML. Each error names the file and line to change.
#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/util/fs.hpp"
#include "unit/source_dir.hpp"

#include "containerd_fixtures.hpp"

#include <gtest/gtest.h>

namespace sc = shimkeeper::containerd;
namespace fs = std::filesystem;

namespace {
namespace containerd_refusals {

using shimkeeper::containerd::test::Adopt;
using shimkeeper::containerd::test::spin_runtime;
using shimkeeper::containerd::test::v2_target;

testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) {
        return testing::AssertionSuccess();
    }
    return testing::AssertionFailure() << "\"" << part << "\" not in: " << text;
}

const fs::path k_inputs = shimkeeper::testing::source_dir() / "tests/fixtures/containerd/input";

std::string read_fixture(const std::string& name) {
    return shimkeeper::util::read_file(k_inputs / name).value_or("");
}

TEST(ContainerdRefusals, InlineRuntimesAreRefusedNamingTheLine) {
    auto out = sc::edit_config_text(read_fixture("inline_runtimes.toml"), v2_target(),
                                    {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::conflict);
    EXPECT_TRUE(contains(out.error().message(), "/etc/containerd/config.toml:5:"));
    EXPECT_TRUE(contains(out.error().message(), "inline"));
}

TEST(ContainerdRefusals, RuntimesFromDottedKeysStillTakeANewTable) {
    auto out = sc::edit_config_text(read_fixture("dotted_runtimes.toml"), v2_target(),
                                    {spin_runtime(Adopt::no)});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_TRUE(contains(*out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]"));
}

TEST(ContainerdRefusals, HandlerDefinedWithDottedKeysIsAConflict) {
    std::string text = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                       "  runtimes.spin.runtime_type = \"io.containerd.spin.v2\"\n";
    auto out = sc::edit_config_text(text, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_TRUE(contains(out.error().message(), "config.toml:3:"));
    EXPECT_TRUE(contains(out.error().message(), "adopt = true"));
}

TEST(ContainerdRefusals, UserHandlerIsNeverOverwrittenWithoutAdopt) {
    std::string input = read_fixture("user_handler.toml");
    auto out = sc::edit_config_text(input, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::conflict);
    EXPECT_TRUE(contains(out.error().message(), "config.toml:7:"));
    EXPECT_TRUE(contains(out.error().message(), "\"spin\""));
}

TEST(ContainerdRefusals, AdoptCommentsTheUserEntryOutAndRestoresItOnRemoval) {
    std::string input = read_fixture("user_handler.toml");
    auto adopted = sc::edit_config_text(input, v2_target(), {spin_runtime(Adopt::yes)});
    ASSERT_TRUE(adopted.has_value()) << adopted.error().message();
    auto tree = toml::parse(*adopted);
    auto* entry =
        tree["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["spin"].as_table();
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->get("options"), nullptr) << "the user's Debug option must be gone";
    EXPECT_TRUE(contains(*adopted, sc::adopted_prefix("spin-v2") + "  runtime_type"));
    // The registry section after the adopted entry is untouched.
    EXPECT_TRUE(contains(*adopted, "\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n"));

    auto removed = sc::edit_config_text(*adopted, v2_target(), {});
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(input, *removed);
}

TEST(ContainerdRefusals, BrokenMarkersNameTheLine) {
    std::string text = "version = 2\n" + sc::begin_marker("spin-v2", "") + "\n[x]\n";
    auto out = sc::edit_config_text(text, v2_target(), {});
    ASSERT_FALSE(out.has_value());
    EXPECT_TRUE(contains(out.error().message(), "config.toml:2:"));
    EXPECT_TRUE(contains(out.error().message(), "no end marker"));

    text = "version = 2\n" + sc::end_marker("spin-v2") + "\n";
    out = sc::edit_config_text(text, v2_target(), {});
    ASSERT_FALSE(out.has_value());
    EXPECT_TRUE(contains(out.error().message(), "no matching begin marker"));
}

TEST(ContainerdRefusals, InvalidTomlIsNeverRewritten) {
    auto out = sc::edit_config_text("version = 2\n[a]\nx = 1\n[a]\n", v2_target(),
                                    {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::invalid_input);
    EXPECT_TRUE(contains(out.error().message(), "config.toml:4:"));
}

TEST(ContainerdRefusals, TwoShimsWithOneHandlerAreBadInput) {
    auto other = spin_runtime(Adopt::no);
    other.shim_name = "spin-v3";
    auto out = sc::edit_config_text("version = 2\n", v2_target(), {spin_runtime(Adopt::no), other});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::invalid_input);
}

TEST(ContainerdRefusals, DropInDoesNotOverrideARootHandler) {
    auto root = toml::parse(read_fixture("user_handler.toml"));
    auto target = v2_target();
    target.label = "/etc/containerd/conf.d/shimkeeper.toml";
    target.root_config = &root;
    auto out = sc::edit_config_text("version = 2\n", target, {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_TRUE(contains(out.error().message(), "root config defines runtime handler \"spin\""));
    ASSERT_TRUE(
        sc::edit_config_text("version = 2\n", target, {spin_runtime(Adopt::yes)}).has_value());
}

TEST(ContainerdRefusals, TemplateLinesAreMaskedAndKept) {
    std::string text = "{{ template \"base\" . }}\n{{ if .X }}\n[plugins.x]\n  a = 1\n{{ end }}\n";
    auto target = v2_target();
    auto unmasked = sc::edit_config_text(text, target, {spin_runtime(Adopt::no)});
    EXPECT_FALSE(unmasked.has_value()) << "a Go template is not TOML";
    target.masking = sc::Masking::go_template;
    auto out = sc::edit_config_text(text, target, {spin_runtime(Adopt::no)});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_TRUE(out->starts_with(text));
}

TEST(ContainerdRefusals, NonAsciiOutsideStringsIsRefusedBeforeTomlxxSeesIt) {
    // toml++ 3.3 hits undefined behaviour on some non-ASCII characters where a key may start.
    auto out =
        sc::edit_config_text("version = 2\n\xD2\x8B = 1\n", v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_FALSE(out.has_value());
    EXPECT_TRUE(contains(out.error().message(), "config.toml:2: a non-ASCII character"));

    std::string fine = "# café\nversion = 2\nname = \"é\"\nmore = '''\né'''\n";
    auto ok = sc::edit_config_text(fine, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_TRUE(ok.has_value()) << ok.error().message();
    EXPECT_TRUE(ok->starts_with(fine));
}

TEST(ContainerdRefusals, ByteOrderMarkIsKeptAndUnderstood) {
    std::string text = "\xEF\xBB\xBFversion = 2\n";
    auto out = sc::edit_config_text(text, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_TRUE(out->starts_with(text));
    auto again = sc::edit_config_text(*out, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(*again, *out);
}

// Block markers are written at the start of a line; the block reader trims lines, so an indented
// one would be taken for a block boundary that shimkeeper never wrote. (Adopted-line look-alikes,
// indented, repeated or holding a block marker, are the user's text: test_containerd_adopted.cpp.)
TEST(ContainerdRefusals, IndentedBlockMarkerIsRefused) {
    const std::string text = "version = 2\n"
                             "  # shimkeeper:end shim=y\n";
    auto out = sc::edit_config_text(text, v2_target(), {});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::conflict);
    EXPECT_TRUE(contains(out.error().message(), "config.toml:2:"));
    EXPECT_TRUE(contains(out.error().message(), "markers"));
}

// A key after a block belongs to the table the block ends with (or, for a block without a header,
// the table before it). Rewriting the block in place or dropping it would move that key into
// another table, so the file is refused, naming the key, and nothing is written.
TEST(ContainerdRefusals, KeyAfterABlockIsRefusedNamingIt) {
    const std::string empty_block =
        sc::begin_marker("spin-v2", "") + "\n" + sc::end_marker("spin-v2") + "\n";
    for (const std::string& text : {
             // An emptied block among root keys: a new block there would swallow `answer`.
             "version = 2\n" + empty_block + "answer = 42\n",
             // A key the user appended after a whole block lands in the block's own table.
             *sc::edit_config_text("version = 2\n", v2_target(), {spin_runtime(Adopt::no)}) +
                 "answer = 42\n",
         }) {
        for (const auto& desired : {std::vector<sc::DesiredRuntime>{spin_runtime(Adopt::no)},
                                    std::vector<sc::DesiredRuntime>{}}) {
            auto out = sc::edit_config_text(text, v2_target(), desired);
            ASSERT_FALSE(out.has_value()) << text;
            EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::conflict);
            EXPECT_TRUE(contains(out.error().message(), "answer"));
            EXPECT_TRUE(contains(out.error().message(), "spin-v2"));
        }
    }
    // A header after the block starts a table of its own: the block may change.
    auto out = sc::edit_config_text("version = 2\n" + empty_block + "[x]\nanswer = 42\n",
                                    v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_TRUE(contains(*out, "[x]\nanswer = 42\n"));
}

} // namespace containerd_refusals
} // namespace
