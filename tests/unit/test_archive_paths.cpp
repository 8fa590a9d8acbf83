// The pure path checks applied to every archive entry and symlink target.
#include "shimkeeper/archive/entry_path.hpp"

#include <gtest/gtest.h>

#include <string>

namespace shimkeeper::archive {
namespace {
namespace archive_paths {

struct Accepted {
    std::string raw;
    std::string normalised;
};

TEST(ArchivePaths, AcceptsRelativePathsAndNormalisesThem) {
    const Accepted cases[] = {
        {"a", "a"},
        {"a/b", "a/b"},
        {"./a", "a"},
        {"./a/./b", "a/b"},
        {"a//b", "a/b"},
        {"dir/", "dir"},
        {".", "."},
        {"./", "."},
        {"..a/b..", "..a/b.."},
        {"a/.../b", "a/.../b"},
        {"containerd-shim-spin-v2", "containerd-shim-spin-v2"},
    };
    for (const auto& [raw, normalised] : cases) {
        auto result = checked_entry_path(raw);
        ASSERT_TRUE(result.has_value()) << raw << ": " << result.error().message();
        EXPECT_EQ(*result, normalised) << raw;
    }
}

struct Refused {
    std::string raw;
    std::string message_part;
};

TEST(ArchivePaths, RefusesPathsThatLeaveTheRootOrCannotBeNames) {
    const Refused cases[] = {
        {"", "empty path"},
        {"/etc/passwd", "'/etc/passwd' is an absolute path"},
        {"//etc/passwd", "absolute"},
        {"..", "escapes the archive root"},
        {"../etc/passwd", "entry '../etc/passwd' escapes the archive root"},
        {"a/../../etc/passwd", "entry 'a/../../etc/passwd' escapes"},
        {"a/..", "escapes"},
        {"./..", "escapes"},
        {std::string("a\0b", 3), "NUL"},
        {"a\nb", "control character"},
        {"a\x7f", "control character"},
        {std::string(300, 'x'), "NAME_MAX"},
        {std::string(5000, 'x'), "PATH_MAX"},
    };
    for (const auto& [raw, message_part] : cases) {
        auto result = checked_entry_path(raw);
        ASSERT_FALSE(result.has_value()) << raw << " was accepted as " << *result;
        EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
        EXPECT_NE(result.error().message().find(message_part), std::string::npos)
            << result.error().message();
    }
}

TEST(ArchivePaths, SymlinkTargetsInsideTheRootAreAccepted) {
    EXPECT_EQ(symlink_target_problem("link", "file"), "");
    EXPECT_EQ(symlink_target_problem("link", "./dir/file"), "");
    EXPECT_EQ(symlink_target_problem("bin/shim", "../lib/shim-1.0"), "");
    EXPECT_EQ(symlink_target_problem("a/b/c", "../../x"), "");
}

TEST(ArchivePaths, SymlinkTargetsLeavingTheRootAreRefused) {
    const std::pair<std::string, std::string> cases[] = {
        {"link", "/etc/passwd"},  {"link", ".."},   {"link", "../x"}, {"a/b/c", "../../../x"},
        {"a/link", "x/../../.."}, {"link", "x/.."}, {"link", ""},
    };
    for (const auto& [link, target] : cases) {
        std::string problem = symlink_target_problem(link, target);
        EXPECT_NE(problem, "") << link << " -> " << target;
        EXPECT_NE(problem.find("'" + link + "'"), std::string::npos) << problem;
    }
    EXPECT_NE(symlink_target_problem("l", "/usr/bin/true").find("absolute"), std::string::npos);
    EXPECT_NE(symlink_target_problem("d/l", "../../x").find("escapes the archive root"),
              std::string::npos);
}

} // namespace archive_paths
} // namespace
} // namespace shimkeeper::archive
