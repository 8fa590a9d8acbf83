// preflight runs real programs: copies of /bin/true, shell scripts, and ELF files patched to
// look like other machines or to need a loader that does not exist.
#include "shimkeeper/store/preflight.hpp"
#include "shimkeeper/util/fs.hpp"

#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace shimkeeper::store {
namespace {
namespace store_preflight {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Preflight : public testing::TempDirTest {
protected:
    fs::path script(const std::string& body) {
        fs::path path = m_dir / ("script" + std::to_string(m_count++));
        std::ofstream(path) << body;
        fs::permissions(path, fs::perms(0755));
        return path;
    }

    // A copy of /bin/true with `patch` applied to its bytes.
    template <typename Patch> fs::path patched_true(Patch patch) {
        std::string bytes = util::read_file("/bin/true").value();
        patch(bytes);
        fs::path path = m_dir / "patched";
        std::ofstream(path, std::ios::binary) << bytes;
        fs::permissions(path, fs::perms(0755));
        return path;
    }

    int m_count = 0;
};

TEST_F(Preflight, TrueSucceeds) {
    fs::copy_file("/bin/true", m_dir / "containerd-shim-true-v2");
    auto result = preflight(m_dir / "containerd-shim-true-v2", 5s);
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_EQ(result->exit_status, 0);
    EXPECT_FALSE(result->timed_out);
}

TEST_F(Preflight, NonZeroExitIsAResultNotAnError) {
    auto result = preflight(script("#!/bin/sh\necho \"shim $1\"\necho oops >&2\nexit 3\n"), 5s);
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_EQ(result->exit_status, 3);
    EXPECT_NE(result->output.find("shim -v"), std::string::npos) << result->output;
    EXPECT_NE(result->output.find("oops"), std::string::npos) << result->output;
}

TEST_F(Preflight, RunsWithOnlyAFixedPath) {
    ::setenv("SK_PREFLIGHT_SECRET", "leak", 1);
    auto result = preflight(script("#!/bin/sh\nenv\n"), 5s);
    ::unsetenv("SK_PREFLIGHT_SECRET");
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_NE(result->output.find("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), std::string::npos);
    EXPECT_EQ(result->output.find("SK_PREFLIGHT_SECRET"), std::string::npos) << result->output;
}

TEST_F(Preflight, OutputIsTruncated) {
    auto result = preflight(script("#!/bin/sh\nhead -c 100000 /dev/zero | tr '\\0' x\n"), 5s);
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_EQ(result->exit_status, 0);
    EXPECT_LT(result->output.size(), k_preflight_output_limit + 100);
    EXPECT_NE(result->output.find("[output truncated]"), std::string::npos);
}

TEST_F(Preflight, OtherArchitectureIsRefusedBeforeExec) {
    fs::path binary = patched_true([](std::string& bytes) {
        bytes[18] = static_cast<char>(183); // e_machine = EM_AARCH64, little-endian
        bytes[19] = 0;
    });
    auto result = preflight(binary, 5s);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
    EXPECT_NE(result.error().message().find("is built for aarch64, this node is x86_64"),
              std::string::npos)
        << result.error().message();
}

TEST_F(Preflight, MissingScriptInterpreterIsAnError) {
    auto result = preflight(script("#!/nonexistent/interpreter\n"), 5s);
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find("'#!/nonexistent/interpreter' does not exist"),
              std::string::npos)
        << result.error().message();
}

TEST_F(Preflight, MissingElfLoaderIsAnError) {
    const std::string loader = "/lib64/ld-linux-x86-64.so.2";
    const std::string missing = "/lib64/ld-linux-x86-64.so.9";
    ASSERT_EQ(loader.size(), missing.size());
    fs::path binary = patched_true([&](std::string& bytes) {
        auto at = bytes.find(loader);
        ASSERT_NE(at, std::string::npos);
        bytes.replace(at, loader.size(), missing);
    });
    auto result = preflight(binary, 5s);
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find("ELF interpreter " + missing + " does not exist"),
              std::string::npos)
        << result.error().message();
}

TEST_F(Preflight, UnknownFormatIsAnError) {
    auto result = preflight(script("this is an HTML error page, not a shim\n"), 5s);
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find("does not recognise it as a program"),
              std::string::npos)
        << result.error().message();
}

TEST_F(Preflight, HangingBinaryIsKilledAtTheTimeout) {
    auto started = std::chrono::steady_clock::now();
    auto result = preflight(script("#!/bin/sh\necho waiting\nexec sleep 60\n"), 300ms);
    auto took = std::chrono::steady_clock::now() - started;
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_TRUE(result->timed_out);
    EXPECT_EQ(result->exit_status, 128 + 9);
    EXPECT_NE(result->output.find("waiting"), std::string::npos);
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 5s);
}

// A shim that leaves a child holding its output open must not hold preflight up, and the
// child goes with the process group.
TEST_F(Preflight, BackgroundChildIsKilledAndDoesNotDelayTheResult) {
    fs::path marker = m_dir / "child-pid";
    auto started = std::chrono::steady_clock::now();
    auto result = preflight(script("#!/bin/sh\nsh -c 'echo $$ > " + marker.string() + ".tmp; mv " +
                                   marker.string() + ".tmp " + marker.string() +
                                   "; exec sleep 60' &\nwhile [ ! -s " + marker.string() +
                                   " ]; do :; done\nexit 0\n"),
                            10s);
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_EQ(result->exit_status, 0);
    EXPECT_FALSE(result->timed_out);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    std::ifstream in(marker);
    std::string pid;
    ASSERT_TRUE(std::getline(in, pid));
    // The orphan is reaped by whoever adopted it: wait until it is gone or a zombie.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    bool alive = true;
    while (alive && std::chrono::steady_clock::now() < deadline) {
        std::ifstream stat("/proc/" + pid + "/stat");
        std::string line;
        alive = std::getline(stat, line) && line.find(") Z ") == std::string::npos;
        if (alive) {
            std::this_thread::sleep_for(10ms); // polling the condition, bounded by the deadline
        }
    }
    EXPECT_FALSE(alive) << "background child " << pid << " survived preflight";
}

} // namespace store_preflight
} // namespace
} // namespace shimkeeper::store
