#include "shimkeeper/daemon/status_text.hpp"

#include <gtest/gtest.h>

namespace {
namespace daemon_status_text {

using namespace std::chrono_literals;
using namespace shimkeeper::daemon;

TEST(DaemonStatusText, ConvergedNamesTheShimsAndTheGeneration) {
    EXPECT_EQ(converged_status({"spin", "wasmtime"}, 4),
              "converged: 2 shims (spin, wasmtime), generation 4");
    EXPECT_EQ(converged_status({"spin"}, 1), "converged: 1 shim (spin), generation 1");
    EXPECT_EQ(converged_status({}, 7), "converged: no shims, generation 7");
}

TEST(DaemonStatusText, FailingSaysWhyAndWhenItRetries) {
    EXPECT_EQ(failing_status("fetching spin-v2: HTTP 404 from http://127.0.0.1/x", 40s),
              "failing: fetching spin-v2: HTTP 404 from http://127.0.0.1/x; retry in 40s");
    EXPECT_EQ(failing_status("", 5s), "failing: unknown reason; retry in 5s");
}

TEST(DaemonStatusText, FailingReasonIsFlattenedToOneLine) {
    EXPECT_EQ(failing_status("containerd failed:\n  exit status 1\n", 300s),
              "failing: containerd failed: exit status 1; retry in 5m");
}

TEST(DaemonStatusText, DurationsReadLikeAPersonSaysThem) {
    EXPECT_EQ(duration_text(0ms), "0s");
    EXPECT_EQ(duration_text(1ms), "1s"); // rounded up: never promise a retry sooner than true
    EXPECT_EQ(duration_text(4'001ms), "5s");
    EXPECT_EQ(duration_text(40s), "40s");
    EXPECT_EQ(duration_text(60s), "1m");
    EXPECT_EQ(duration_text(150s), "2m30s");
    EXPECT_EQ(duration_text(300s), "5m");
    EXPECT_EQ(duration_text(3900s), "1h5m");
    EXPECT_EQ(duration_text(3601s), "1h1s");
}

TEST(DaemonStatusText, OneLineCollapsesWhitespace) {
    EXPECT_EQ(one_line("  a\n\tb   c \r\n"), "a b c");
    EXPECT_EQ(one_line(""), "");
}

TEST(DaemonStatusText, OneLineCutsLongTextVisibly) {
    std::string cut = one_line(std::string(500, 'x'), 20);
    EXPECT_EQ(cut.size(), 20u);
    EXPECT_TRUE(cut.ends_with("..."));
}

TEST(DaemonStatusText, OneLineNeverSplitsAUtf8Character) {
    // "é" is two bytes; a cut in its middle would leave invalid UTF-8 in the journal.
    std::string text = "ab" + std::string("\xc3\xa9") + "cdefgh";
    std::string cut = one_line(text, 6); // keep 3 bytes: would end inside the "é"
    EXPECT_EQ(cut, "ab...");
}

} // namespace daemon_status_text
} // namespace
