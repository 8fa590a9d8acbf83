// The adopted-line grammar (managed_block.hpp: "#shimkeeper:adopted:<shim># <user's line>") and
// the engine around it: every line is either a well-formed adopted line or plainly the user's own
// text, and writing, restoring and checking agree on which. Each input goes through the engine end
// to end: edit, edit again (the same bytes), remove (the user's bytes back).
#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/containerd/toml_text.hpp"

#include "containerd_fixtures.hpp"

#include <gtest/gtest.h>

namespace sc = shimkeeper::containerd;

namespace {
namespace containerd_adopted {

using shimkeeper::containerd::test::Adopt;
using shimkeeper::containerd::test::spin_runtime;
using shimkeeper::containerd::test::v2_target;

const std::string k_runc = "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
                           "  runtime_type = \"io.containerd.runc.v2\"\n";
const std::string k_spin_header =
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]";
const std::string k_user_spin = k_spin_header + "\n  runtime_type = \"io.containerd.old.v1\"\n";

// Edit with `desired`, edit again, remove every shim; returns what the removal gave.
std::string round_trip(const std::string& input, const std::vector<sc::DesiredRuntime>& desired) {
    auto edited = sc::edit_config_text(input, v2_target(), desired);
    EXPECT_TRUE(edited.has_value()) << edited.error().message() << "\ninput:\n" << input;
    if (!edited) {
        return "";
    }
    auto again = sc::edit_config_text(*edited, v2_target(), desired);
    EXPECT_TRUE(again.has_value()) << again.error().message() << "\nedited:\n" << *edited;
    if (again) {
        EXPECT_EQ(*again, *edited) << "editing twice is not a fixed point";
    }
    auto removed = sc::edit_config_text(*edited, v2_target(), {});
    EXPECT_TRUE(removed.has_value()) << removed.error().message() << "\nedited:\n" << *edited;
    if (!removed) {
        return "";
    }
    auto removed_again = sc::edit_config_text(*removed, v2_target(), {});
    EXPECT_TRUE(removed_again.has_value() && *removed_again == *removed)
        << "removing twice is not a fixed point";
    return *removed;
}

// Edit, edit again and remove give the input back byte for byte (but for the one byte an edit
// cannot take back: a final line ending added before a block).
void expect_round_trip(const std::string& input, const std::vector<sc::DesiredRuntime>& desired) {
    SCOPED_TRACE(input);
    const std::string removed = round_trip(input, desired);
    if (!input.empty() && !input.ends_with('\n')) {
        EXPECT_EQ(removed, input + sc::dominant_line_ending(sc::split_lines(input)));
    } else {
        EXPECT_EQ(removed, input);
    }
}

// --- The grammar -------------------------------------------------------------------------------

TEST(ContainerdAdoptedGrammar, WellFormedLineGivesShimAndTheUserLineWithItsEnding) {
    auto mark = sc::parse_adopted("#shimkeeper:adopted:spin-v2# a = 1\n");
    ASSERT_TRUE(mark.has_value());
    EXPECT_EQ(mark->shim, "spin-v2");
    EXPECT_EQ(mark->original, "a = 1\n");
    EXPECT_EQ(sc::adopted_prefix("spin-v2") + "a = 1\n", "#shimkeeper:adopted:spin-v2# a = 1\n");
}

TEST(ContainerdAdoptedGrammar, CrlfStaysInTheUserLine) {
    auto mark = sc::parse_adopted("#shimkeeper:adopted:spin-v2#   x = 2\r\n");
    ASSERT_TRUE(mark.has_value());
    EXPECT_EQ(mark->original, "  x = 2\r\n");
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:spin-v2#\r\n").has_value());
}

TEST(ContainerdAdoptedGrammar, NoFinalNewline) {
    auto mark = sc::parse_adopted("#shimkeeper:adopted:spin-v2# a = 1");
    ASSERT_TRUE(mark.has_value());
    EXPECT_EQ(mark->original, "a = 1");
    // The separator with nothing after it: an empty user line (a line that had no bytes).
    auto empty = sc::parse_adopted("#shimkeeper:adopted:spin-v2# ");
    ASSERT_TRUE(empty.has_value());
    EXPECT_EQ(empty->original, "");
    // Without the separator's space it is not a marker.
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:spin-v2#").has_value());
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:spin-v2#\n").has_value());
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:").has_value());
}

TEST(ContainerdAdoptedGrammar, MarkersInsideOtherCommentsOrIndentedAreNotMarkers) {
    EXPECT_FALSE(sc::parse_adopted("# #shimkeeper:adopted:spin-v2# a = 1\n").has_value());
    EXPECT_FALSE(sc::parse_adopted("  #shimkeeper:adopted:spin-v2# a = 1\n").has_value());
    EXPECT_FALSE(sc::parse_adopted("a = 1 #shimkeeper:adopted:spin-v2# b\n").has_value());
    EXPECT_FALSE(sc::parse_adopted("# shimkeeper:adopted:spin-v2# a = 1\n").has_value());
}

TEST(ContainerdAdoptedGrammar, RepeatedMarkersAreNotAMarker) {
    // shimkeeper never comments out one of its own marker lines, so a user line that is one is
    // not something it wrote: the whole line is the user's comment.
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:a# #shimkeeper:adopted:b# x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:a# #shimkeeper:adopted:a#"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:a#  \t#shimkeeper:x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:a# # shimkeeper:end shim=y\n"));
    // A user comment that merely mentions shimkeeper is adoptable.
    auto mark = sc::parse_adopted("#shimkeeper:adopted:a# # see shimkeeper:adopted docs\n");
    ASSERT_TRUE(mark.has_value());
    EXPECT_EQ(mark->original, "# see shimkeeper:adopted docs\n");
}

TEST(ContainerdAdoptedGrammar, OnlyValidShimNames) {
    auto mark = sc::parse_adopted("#shimkeeper:adopted:ghost# x\n");
    ASSERT_TRUE(mark.has_value()) << "a shim that does not exist is still a shim name";
    EXPECT_EQ(mark->shim, "ghost");
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:# x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:Spin# x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:a b# x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:-a# x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:a#b# x\n"));
    EXPECT_FALSE(sc::parse_adopted("#shimkeeper:adopted:[plugins]\n"));
}

TEST(ContainerdAdoptedGrammar, AnyByteStringIsEitherAMarkerOrNot) {
    // Every prefix of a marker line, with and without its ending: never a crash, and a marker
    // only once the separator is complete.
    const std::string line = "#shimkeeper:adopted:spin-v2# a = 1\r\n";
    const std::size_t separator_end = std::string("#shimkeeper:adopted:spin-v2# ").size();
    for (std::size_t n = 0; n <= line.size(); ++n) {
        auto mark = sc::parse_adopted(std::string_view(line).substr(0, n));
        EXPECT_EQ(mark.has_value(), n >= separator_end) << n;
        if (mark) {
            EXPECT_EQ(mark->original, line.substr(separator_end, n - separator_end));
        }
    }
}

TEST(ContainerdAdoptedGrammar, WhatTheWriterWritesParsesBackToTheUsersLine) {
    for (const std::string line : {"a = 1\n", "a = 1", "  x = 2\r\n", "\n", "\r\n", "# comment\n",
                                   "#\n", "#shimkeeper", "\t", "#  shimkeeper:adopted:a# x\n",
                                   "shimkeeper:adopted:a# x\n", "[t] # #shimkeeper:x\n"}) {
        const std::string written = sc::adopt_line("spin-v2", line);
        auto mark = sc::parse_adopted(written);
        ASSERT_TRUE(mark.has_value()) << written;
        EXPECT_EQ(mark->shim, "spin-v2");
        EXPECT_EQ(mark->original, line);
    }
    // Lines holding a marker are never wrapped, so never nested.
    for (const std::string line :
         {"#shimkeeper:adopted:a# x\n", "#shimkeeper:adopted:a#", "  #shimkeeper:x\r\n",
          "# shimkeeper:end shim=y\n", "\t# shimkeeper:begin shim=y", ""}) {
        EXPECT_EQ(sc::adopt_line("spin-v2", line), line);
    }
}

TEST(ContainerdAdoptedGrammar, RestoreKeepsTheKeptShimsAndDropsEmptyUserLines) {
    const std::vector<std::string> lines = {"#shimkeeper:adopted:a# x = 1\n",
                                            "#shimkeeper:adopted:b# y = 2\n",
                                            "#shimkeeper:adopted:b#\n", "#shimkeeper:adopted:a# "};
    EXPECT_EQ(sc::restore_adopted(lines, {"a"}, sc::Masking::none),
              (std::vector<std::string>{"#shimkeeper:adopted:a# x = 1\n", "y = 2\n",
                                        "#shimkeeper:adopted:b#\n"}));
    EXPECT_EQ(sc::restore_adopted(lines, {}, sc::Masking::none),
              (std::vector<std::string>{"x = 1\n", "y = 2\n", "#shimkeeper:adopted:b#\n"}));
}

// --- The engine on each of those inputs ----------------------------------------------------------

TEST(ContainerdAdoptedEngine, MalformedMarkerAtTheEndWithoutFinalNewline) {
    // Found by fuzzing: the comment belongs to the adopted section, was commented out again, and
    // the second edit refused its own output.
    expect_round_trip("version = 2\n" + k_runc + k_user_spin + "#shimkeeper:adopted:spin-v2#",
                      {spin_runtime(Adopt::yes)});
    // A marker of the kept shim with an empty user line stands for nothing and is dropped.
    EXPECT_EQ(round_trip("version = 2\n" + k_runc + k_user_spin + "#shimkeeper:adopted:spin-v2# ",
                         {spin_runtime(Adopt::yes)}),
              "version = 2\n" + k_runc + k_user_spin);
    expect_round_trip("version = 2\n" + k_runc + "#shimkeeper:adopted:spin-v2#",
                      {spin_runtime(Adopt::yes)});
}

TEST(ContainerdAdoptedEngine, MalformedMarkerAfterOtherComments) {
    expect_round_trip("version = 2\n" + k_runc + k_user_spin +
                          "# a comment\n# another\n#shimkeeper:adopted:spin-v2#\n",
                      {spin_runtime(Adopt::yes)});
    expect_round_trip("version = 2\n" + k_runc + k_user_spin +
                          "# a comment\n#shimkeeper:adopted:spin-v2## more\n",
                      {spin_runtime(Adopt::yes)});
}

TEST(ContainerdAdoptedEngine, MarkersInsideOtherComments) {
    const std::string input = "version = 2\n" + k_runc + k_user_spin +
                              "# #shimkeeper:adopted:spin-v2# a = 1\n"
                              "  #shimkeeper:adopted:spin-v2# b = 2\n";
    expect_round_trip(input, {spin_runtime(Adopt::yes)});
    // Plain comments: with no shim there is nothing to restore and nothing changes.
    auto out = sc::edit_config_text(input, v2_target(), {});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_EQ(*out, input);
}

TEST(ContainerdAdoptedEngine, Crlf) {
    const std::string input = "version = 2\r\n"
                              "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\r\n"
                              "  runtime_type = \"io.containerd.runc.v2\"\r\n" +
                              k_spin_header + "\r\n  runtime_type = \"old\"\r\n# note\r\n";
    auto edited = sc::edit_config_text(input, v2_target(), {spin_runtime(Adopt::yes)});
    ASSERT_TRUE(edited.has_value()) << edited.error().message();
    EXPECT_NE(edited->find(sc::adopted_prefix("spin-v2") + "  runtime_type = \"old\"\r\n"),
              std::string::npos);
    expect_round_trip(input, {spin_runtime(Adopt::yes)});
    // Without a final line ending, and with a malformed marker as the last line.
    expect_round_trip(input + "#shimkeeper:adopted:spin-v2#", {spin_runtime(Adopt::yes)});
    expect_round_trip(input + "#shimkeeper:adopted:spin-v2#\r\n", {spin_runtime(Adopt::yes)});
}

TEST(ContainerdAdoptedEngine, RepeatedMarkersAreTheUsersText) {
    // Once refused as forged; now plainly a comment of the user's, kept as it is.
    const std::string doubly = "version = 2\n"
                               "#shimkeeper:adopted:spin# #shimkeeper:adopted:spin# a = 1\n";
    auto out = sc::edit_config_text(doubly, v2_target(), {});
    ASSERT_TRUE(out.has_value()) << out.error().message();
    EXPECT_EQ(*out, doubly);
    expect_round_trip(doubly + k_runc, {spin_runtime(Adopt::yes)});
    // Indented, or holding a block marker: the user's comment too.
    for (const std::string line : {"  #shimkeeper:adopted:[plugins]\n",
                                   "#shimkeeper:adopted:sh# # shimkeeper:end shim=y\n"}) {
        auto kept = sc::edit_config_text("version = 2\n" + line, v2_target(), {});
        ASSERT_TRUE(kept.has_value()) << kept.error().message();
        EXPECT_EQ(*kept, "version = 2\n" + line);
    }
    expect_round_trip("version = 2\n" + k_runc + k_user_spin +
                          "#shimkeeper:adopted:spin-v2# #shimkeeper:adopted:b# x = 1\n"
                          "#shimkeeper:adopted:a# # shimkeeper:end shim=y\n",
                      {spin_runtime(Adopt::yes)});
}

TEST(ContainerdAdoptedEngine, AdoptedLinesOfAKeptShimInsideAnAdoptedSectionStayAsTheyAre) {
    // A second shim's adopted line inside the section spin-v2 adopts: never wrapped twice.
    auto other = spin_runtime(Adopt::yes);
    other.shim_name = "other";
    other.handler = "other";
    const std::string input = "version = 2\n" + k_runc + k_user_spin +
                              "#shimkeeper:adopted:other# # kept by other\n"
                              "  x = 1\n";
    auto edited = sc::edit_config_text(input, v2_target(), {spin_runtime(Adopt::yes), other});
    ASSERT_TRUE(edited.has_value()) << edited.error().message();
    EXPECT_NE(edited->find("\n#shimkeeper:adopted:other# # kept by other\n"), std::string::npos);
    EXPECT_NE(edited->find("\n#shimkeeper:adopted:spin-v2#   x = 1\n"), std::string::npos);
    auto again = sc::edit_config_text(*edited, v2_target(), {spin_runtime(Adopt::yes), other});
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(*again, *edited);
    // Removing both restores everything, the other shim's line included.
    auto removed = sc::edit_config_text(*edited, v2_target(), {});
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, "version = 2\n" + k_runc + k_user_spin + "# kept by other\n  x = 1\n");
}

TEST(ContainerdAdoptedEngine, MarkerNamingAShimThatDoesNotExistIsRestored) {
    // The user's lines come back first, and only then is the file read: the restored section
    // ends spin-v2's adopted section.
    const std::string ghost_section = "#shimkeeper:adopted:ghost# [other]\n"
                                      "#shimkeeper:adopted:ghost# k = 1\n";
    const std::string input = "version = 2\n" + k_runc + k_user_spin + ghost_section;
    const std::string restored = "version = 2\n" + k_runc + k_user_spin + "[other]\nk = 1\n";
    auto edited = sc::edit_config_text(input, v2_target(), {spin_runtime(Adopt::yes)});
    ASSERT_TRUE(edited.has_value()) << edited.error().message();
    EXPECT_NE(edited->find("\n[other]\nk = 1\n"), std::string::npos) << *edited;
    EXPECT_EQ(round_trip(input, {spin_runtime(Adopt::yes)}), restored);
    expect_round_trip(restored, {spin_runtime(Adopt::yes)});

    // A ghost's lines that are the user's handler: restored, then adopted.
    const std::string ghost_handler = "version = 2\n" + k_runc + "#shimkeeper:adopted:ghost# " +
                                      k_spin_header + "\n#shimkeeper:adopted:ghost#   a = 1\n";
    EXPECT_EQ(round_trip(ghost_handler, {spin_runtime(Adopt::yes)}),
              "version = 2\n" + k_runc + k_spin_header + "\n  a = 1\n");
    auto refused = sc::edit_config_text(ghost_handler, v2_target(), {spin_runtime(Adopt::no)});
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code(), shimkeeper::util::ErrorCode::conflict);

    // Empty user lines, the last one without a line ending.
    EXPECT_EQ(round_trip("version = 2\n" + k_runc +
                             "#shimkeeper:adopted:ghost# \n"
                             "#shimkeeper:adopted:ghost# ",
                         {spin_runtime(Adopt::yes)}),
              "version = 2\n" + k_runc + "\n");
}

TEST(ContainerdAdoptedEngine, PlainInputsRoundTrip) {
    expect_round_trip("version = 2\n" + k_runc + k_user_spin, {spin_runtime(Adopt::yes)});
    expect_round_trip("version = 2\n" + k_runc + k_spin_header + "\n  a = 1",
                      {spin_runtime(Adopt::yes)});
    expect_round_trip("version = 2\n" + k_runc + "# just a comment", {spin_runtime(Adopt::yes)});
}

TEST(ContainerdAdoptedEngine, AFileThatIsNotTomlIsRefusedEvenIfRestoringWouldRepairIt) {
    // Found by fuzzing: the duplicate key is invalid as the file stands; the restored header of a
    // shim that does not exist would split it into two tables.
    const std::string input = "version = 2\n" + k_runc + "#shimkeeper:adopted:ghost# [other]\n" +
                              "  runtime_type = \"io.containerd.runc.v2\"\n";
    auto out = sc::edit_config_text(input, v2_target(), {spin_runtime(Adopt::yes)});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().code(), shimkeeper::util::ErrorCode::invalid_input);
    EXPECT_NE(out.error().message().find("config.toml:5"), std::string::npos)
        << out.error().message();
}

} // namespace containerd_adopted
} // namespace
