// CurlDownloader's limits against the real artifact server: stall timeout, total timeout and
// the size cap (announced by Content-Length, or discovered while streaming).
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "test_fetch_server.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::fetch {
namespace {
namespace fetch_downloader_limits {

using namespace std::chrono_literals;
using namespace testing;
using Clock = std::chrono::steady_clock;

class DownloaderLimitsTest : public ::testing::Test {
protected:
    void SetUp() override {
        write_file(m_www / "a.bin", random_bytes(200'000));
        fs::create_directories(m_dest);
        m_server = std::make_unique<ArtifactServer>(m_www, m_tmp.path());
    }

    DownloadRequest request(const std::string& path) const {
        DownloadRequest r;
        r.url = m_server->url(path);
        r.settings.retries = 0;
        r.label = "demo";
        return r;
    }

    TempDir m_tmp;
    fs::path m_www = m_tmp.path() / "www";
    fs::path m_dest = m_tmp.path() / "dest";
    std::unique_ptr<ArtifactServer> m_server;
    CurlDownloader m_downloader{ProgressStyle::none, 5ms};
};

TEST_F(DownloaderLimitsTest, StalledServerIsGivenUpOnAfterTheStallTimeout) {
    auto r = request("/stall/a.bin");
    r.settings.stall_timeout = 1s;
    auto started = Clock::now();
    auto result = m_downloader.download(r, m_dest);
    auto elapsed = Clock::now() - started;
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "no data received for 1.0 s"));
    EXPECT_TRUE(contains(result.error().message(), r.url));
    EXPECT_GE(elapsed, 1s);
    // libcurl looks at an idle transfer about once a second: allow that plus a loaded machine.
    EXPECT_LT(elapsed, 1s + 5s) << "the stall timeout fired late";
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderLimitsTest, StallIsRetriedLikeAnyTransientFailure) {
    auto r = request("/stall/a.bin");
    r.settings.stall_timeout = 500ms;
    r.settings.retries = 1;
    auto result = m_downloader.download(r, m_dest);
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "2 attempts"));
    EXPECT_EQ(m_server->requests_for("/stall/a.bin"), 2);
}

TEST_F(DownloaderLimitsTest, SlowButSteadyTransferIsNotAStall) {
    // Two seconds of trickle in 100 ms slices, twice the stall timeout: only a transfer that
    // stops, not one that takes long, is a stall (1 s leaves room for a loaded server thread).
    auto r = request("/slow/100000/a.bin");
    r.settings.stall_timeout = 1s;
    auto result = m_downloader.download(r, m_dest);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->size, 200'000u);
}

TEST_F(DownloaderLimitsTest, TotalTimeoutEndsATrickle) {
    auto r = request("/slow/20000/a.bin"); // would take ten seconds
    r.settings.total_timeout = 1s;
    auto started = Clock::now();
    auto result = m_downloader.download(r, m_dest);
    auto elapsed = Clock::now() - started;
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "imed out")) << "curl's own timeout message";
    EXPECT_LT(elapsed, 1s + 2s);
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderLimitsTest, AnnouncedLengthAboveTheCapIsRefusedEarly) {
    auto r = request("/slow/50000/a.bin"); // four seconds if it were read to the end
    r.settings.max_size = 1000;
    r.settings.retries = 2;
    auto started = Clock::now();
    auto result = m_downloader.download(r, m_dest);
    ASSERT_FALSE(result);
    EXPECT_LT(Clock::now() - started, 2s) << "the body was read although its length was known";
    EXPECT_TRUE(contains(result.error().message(), "announces 195.3 KiB"));
    EXPECT_TRUE(contains(result.error().message(), "1000 B limit"));
    EXPECT_TRUE(contains(result.error().message(), "1 attempt")) << "the cap is not retried";
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderLimitsTest, BodyWithoutLengthIsCutAtTheCap) {
    for (std::string path : {"/nolength/a.bin", "/chunked/a.bin"}) {
        auto r = request(path);
        r.settings.max_size = 100'000;
        auto result = m_downloader.download(r, m_dest);
        ASSERT_FALSE(result) << path;
        EXPECT_TRUE(contains(result.error().message(), "grew past the 97.7 KiB limit"));
        EXPECT_TRUE(entries_of(m_dest).empty()) << path;
    }
}

TEST_F(DownloaderLimitsTest, BodyWithoutLengthUnderTheCapIsComplete) {
    for (std::string path : {"/nolength/a.bin", "/chunked/a.bin"}) {
        auto result = m_downloader.download(request(path), m_dest);
        ASSERT_TRUE(result) << path << ": " << result.error().message();
        EXPECT_EQ(result->size, 200'000u);
        fs::remove(result->file);
    }
}

TEST_F(DownloaderLimitsTest, BodyExactlyAtTheCapIsAccepted) {
    auto r = request("/a.bin");
    r.settings.max_size = 200'000;
    auto result = m_downloader.download(r, m_dest);
    ASSERT_TRUE(result) << result.error().message();
}

} // namespace fetch_downloader_limits
} // namespace
} // namespace shimkeeper::fetch
