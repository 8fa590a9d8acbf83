// CurlDownloader against the real artifact server on 127.0.0.1: good artifacts, checksum
// mismatch, HTTP errors, retries, redirects and their refusals, TLS.
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"
#include "test_fetch_server.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <gtest/gtest.h>

namespace shimkeeper::fetch {
namespace {
namespace fetch_downloader {

using namespace std::chrono_literals;
using namespace testing;

class DownloaderTest : public ::testing::Test {
protected:
    void SetUp() override {
        write_file(m_www / "a.bin", m_payload);
        fs::create_directories(m_dest);
        util::Sha256 hash;
        hash.update(m_payload);
        m_digest = hash.finish_hex();
        m_server = std::make_unique<ArtifactServer>(m_www, m_tmp.path());
    }

    DownloadRequest request(const std::string& url) const {
        DownloadRequest r;
        r.url = url;
        r.expected_sha256 = m_digest;
        r.settings.retries = 2;
        r.settings.stall_timeout = 5s;
        r.label = "demo";
        return r;
    }

    util::Expected<DownloadResult> download(const DownloadRequest& r) {
        return m_downloader.download(r, m_dest);
    }

    TempDir m_tmp; // first: destroyed last, after it can see whether the test failed
    fs::path m_www = m_tmp.path() / "www";
    fs::path m_dest = m_tmp.path() / "dest";
    std::string m_payload = random_bytes(100'000);
    std::string m_digest;
    std::unique_ptr<ArtifactServer> m_server;
    CurlDownloader m_downloader{ProgressStyle::none, 5ms};
};

TEST_F(DownloaderTest, GoodArtifactLandsInDestWithItsDigest) {
    auto result = download(request(m_server->url("/a.bin")));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->sha256, m_digest);
    EXPECT_EQ(result->size, m_payload.size());
    EXPECT_EQ(result->attempts, 1);
    EXPECT_EQ(result->file.parent_path(), m_dest);
    EXPECT_EQ(util::read_file(result->file).value(), m_payload);
    EXPECT_EQ(entries_of(m_dest).size(), 1u);
}

TEST_F(DownloaderTest, UppercaseExpectedDigestIsAccepted) {
    auto r = request(m_server->url("/a.bin"));
    std::ranges::transform(*r.expected_sha256, r.expected_sha256->begin(),
                           [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    auto result = download(r);
    ASSERT_TRUE(result) << result.error().message();
}

TEST_F(DownloaderTest, ChecksumMismatchNamesBothDigestsAndLeavesNothing) {
    auto r = request(m_server->url("/a.bin"));
    r.expected_sha256 = std::string(64, 'a');
    auto result = download(r);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::checksum);
    EXPECT_TRUE(contains(result.error().message(), std::string(64, 'a')));
    EXPECT_TRUE(contains(result.error().message(), m_digest));
    EXPECT_TRUE(contains(result.error().message(), r.url));
    EXPECT_TRUE(entries_of(m_dest).empty());
    EXPECT_EQ(m_server->requests_for("/a.bin"), 1) << "a mismatch is not retried";
}

TEST_F(DownloaderTest, UnverifiedDownloadReportsTheDigest) {
    auto r = request(m_server->url("/a.bin"));
    r.expected_sha256.reset();
    auto result = download(r);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->sha256, m_digest);
}

TEST_F(DownloaderTest, NotFoundIsAskedOnceAndNamesStatusAndUrl) {
    auto r = request(m_server->url("/missing.bin"));
    auto result = download(r);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::not_found);
    EXPECT_TRUE(contains(result.error().message(), "HTTP 404"));
    EXPECT_TRUE(contains(result.error().message(), r.url));
    EXPECT_TRUE(contains(result.error().message(), "1 attempt"));
    EXPECT_EQ(m_server->requests_for("/missing.bin"), 1);
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderTest, ServerErrorsAreRetriedUntilSuccess) {
    auto result = download(request(m_server->url("/fail/500/2/a.bin")));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->attempts, 3);
    EXPECT_EQ(result->sha256, m_digest);
    EXPECT_EQ(m_server->requests_for("/fail/500/2/a.bin"), 3);
    EXPECT_EQ(entries_of(m_dest).size(), 1u);
}

TEST_F(DownloaderTest, PersistentServerErrorGivesUpAfterAllAttempts) {
    auto r = request(m_server->url("/fail/503/100/a.bin"));
    auto result = download(r);
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "HTTP 503"));
    EXPECT_TRUE(contains(result.error().message(), "3 attempts"));
    EXPECT_TRUE(contains(result.error().message(), r.url));
    EXPECT_EQ(m_server->requests_for("/fail/503/100/a.bin"), 3);
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderTest, ClientErrorsOtherThan429AreNotRetried) {
    auto result = download(request(m_server->url("/fail/403/100/a.bin")));
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "HTTP 403"));
    EXPECT_EQ(m_server->requests_for("/fail/403/100/a.bin"), 1);
}

TEST_F(DownloaderTest, TooManyRequestsHonoursASmallRetryAfter) {
    auto started = std::chrono::steady_clock::now();
    auto result = download(request(m_server->url("/retry-after/1/1/a.bin")));
    auto elapsed = std::chrono::steady_clock::now() - started;
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->attempts, 2);
    EXPECT_GE(elapsed, 1s) << "Retry-After: 1 was not waited for";
}

TEST_F(DownloaderTest, CutTransfersAreRetriedAndLeaveNothing) {
    auto result = download(request(m_server->url("/truncate/a.bin")));
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "3 attempts"));
    EXPECT_EQ(m_server->requests_for("/truncate/a.bin"), 3);
    EXPECT_TRUE(entries_of(m_dest).empty());
}

// Staging ahead stops a download its Shim no longer needs: between attempts (a Retry-After of
// 30 s is not waited out), and during a transfer, leaving nothing behind either way.
TEST_F(DownloaderTest, AnAbandonedDownloadStopsBetweenAttemptsAndMidTransfer) {
    auto between = request(m_server->url("/retry-after/30/5/a.bin"));
    auto started = std::chrono::steady_clock::now();
    // Half a second in, the 429 is answered and its 30 s wait has begun.
    between.abandon = [started] {
        return std::chrono::steady_clock::now() - started > 500ms;
    };
    auto result = download(between);
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "stopped: no longer wanted"))
        << result.error().message();
    EXPECT_LT(std::chrono::steady_clock::now() - started, 20s) << "the Retry-After was waited out";
    EXPECT_EQ(m_server->requests_for("/retry-after/30/5/a.bin"), 1);

    auto during = request(m_server->url("/slow/2000/a.bin")); // 100 kB at 2 kB/s: 50 s
    std::atomic<bool> stop{false};
    during.heartbeat = [&stop] {
        stop = true;
    }; // the first beat comes while bytes trickle
    during.abandon = [&stop] {
        return stop.load();
    };
    result = download(during);
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "stopped: no longer wanted"))
        << result.error().message();
    EXPECT_TRUE(contains(result.error().message(), "1 attempt")) << "an abandoned one is retried";
    EXPECT_TRUE(entries_of(m_dest).empty());
}

// The daemon's watchdog is pinged through the heartbeat while bytes trickle in, so a download
// longer than WatchdogSec does not get the process killed.
TEST_F(DownloaderTest, HeartbeatBeatsWhileASlowDownloadRuns) {
    int beats = 0;
    auto r = request(m_server->url("/slow/40000/a.bin")); // 100 kB at 40 kB/s: about 2.5 s
    r.heartbeat = [&beats] {
        ++beats;
    };
    auto result = download(r);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_GE(beats, 2);
}

// A cut body is continued with a Range request: the retry carries only the missing half.
TEST_F(DownloaderTest, CutVerifiedTransferResumesWhereItStopped) {
    auto result = download(request(m_server->url("/truncate-once/a.bin")));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->attempts, 2);
    EXPECT_EQ(util::read_file(result->file).value(), m_payload);
}

TEST_F(DownloaderTest, ConnectionRefusedIsRetriedThenFails) {
    int port = m_server->port();
    m_server.reset(); // nothing listens there any more
    auto r = request("http://127.0.0.1:" + std::to_string(port) + "/a.bin");
    auto result = download(r);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::network);
    EXPECT_TRUE(contains(result.error().message(), "3 attempts"));
    EXPECT_TRUE(contains(result.error().message(), "onnect"));
    EXPECT_TRUE(contains(result.error().message(), r.url));
    EXPECT_TRUE(entries_of(m_dest).empty());
}

// A registry's credentials go to the registry alone: kept on a redirect within the first URL's
// origin, dropped on one to another host (registries hand out storage URLs), and the last
// answer's status and challenge are reported either way.
TEST_F(DownloaderTest, AuthorizationFollowsRedirectsOnlyWithinItsOrigin) {
    DownloadRequest same = request(m_server->url("/need-auth/t0k/redirect/1/need-auth/t0k/a.bin"));
    same.headers = {"Authorization: Bearer t0k"};
    ResponseInfo info;
    same.response = &info;
    auto kept = download(same);
    ASSERT_TRUE(kept) << kept.error().message();
    EXPECT_EQ(info.status, 200);

    ArtifactServer other(m_www, m_tmp.path());
    char* target = curl_easy_escape(nullptr, other.url("/need-auth/t0k/a.bin").c_str(), 0);
    DownloadRequest away =
        request(m_server->url("/need-auth/t0k/redirect-to/" + std::string(target)));
    curl_free(target);
    away.headers = same.headers;
    away.response = &info;
    auto dropped = download(away);
    ASSERT_FALSE(dropped);
    EXPECT_TRUE(contains(dropped.error().message(), "HTTP 401")) << dropped.error().message();
    EXPECT_EQ(info.status, 401);
    EXPECT_TRUE(contains(info.www_authenticate, "Bearer realm=")) << info.www_authenticate;
}

TEST_F(DownloaderTest, RedirectChainOfThreeIsFollowed) {
    auto result = download(request(m_server->url("/redirect/3/a.bin")));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->sha256, m_digest);
    EXPECT_EQ(result->attempts, 1);
    EXPECT_EQ(m_server->total_requests(), 4);
}

TEST_F(DownloaderTest, RedirectChainOfFiveIsFollowedAndSixIsRefused) {
    ASSERT_TRUE(download(request(m_server->url("/redirect/5/a.bin"))));
    auto result = download(request(m_server->url("/redirect/6/a.bin")));
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "more than 5 redirects"));
    EXPECT_EQ(m_server->requests_for("/redirect/6/a.bin"), 1) << "a refusal is not retried";
    EXPECT_EQ(m_server->requests_for("/a.bin"), 1) << "only the five-hop chain got there";
    EXPECT_EQ(entries_of(m_dest).size(), 1u);
}

TEST_F(DownloaderTest, RedirectToFileUrlIsRefused) {
    auto result = download(request(m_server->url("/redirect-to/file%3A%2F%2F%2Fetc%2Fpasswd")));
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "file:///etc/passwd"));
    EXPECT_TRUE(contains(result.error().message(), "refused"));
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderTest, InitialFileUrlIsRead) {
    auto result = download(request("file://" + (m_www / "a.bin").string()));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->sha256, m_digest);
}

TEST_F(DownloaderTest, MissingFileUrlIsNotFound) {
    auto result = download(request("file://" + (m_www / "nope.bin").string()));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::not_found);
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderTest, UnsupportedSchemeIsBadInput) {
    auto result = download(request("ftp://127.0.0.1/a.bin"));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::invalid_input);
    EXPECT_TRUE(contains(result.error().message(), "ftp://127.0.0.1/a.bin"));
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(DownloaderTest, MissingDestinationIsAnIoErrorNamingIt) {
    auto result = m_downloader.download(request(m_server->url("/a.bin")), m_tmp.path() / "nodir");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::io);
    EXPECT_TRUE(contains(result.error().message(), "nodir"));
    EXPECT_EQ(m_server->total_requests(), 0);
}

class TlsDownloaderTest : public DownloaderTest {
protected:
    void SetUp() override {
        DownloaderTest::SetUp();
        m_cert = make_self_signed_cert(m_tmp.path());
        m_tls_server = std::make_unique<ArtifactServer>(m_www, m_tmp.path(), m_cert);
    }
    DownloadRequest tls_request(const std::string& path) const {
        auto r = request(m_tls_server->url(path));
        r.settings.ca_bundle = m_cert.cert.string();
        return r;
    }

    TlsFiles m_cert;
    std::unique_ptr<ArtifactServer> m_tls_server;
};

TEST_F(TlsDownloaderTest, HttpsWithTheConfiguredCaBundleWorks) {
    auto result = download(tls_request("/redirect/2/a.bin"));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->sha256, m_digest);
}

TEST_F(TlsDownloaderTest, UntrustedCertificateFailsWithoutRetry) {
    auto r = tls_request("/a.bin");
    r.settings.ca_bundle.reset(); // the system store does not know our certificate
    auto result = download(r);
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "1 attempt"));
    EXPECT_EQ(m_tls_server->total_requests(), 0) << "no request went past the handshake";
    EXPECT_TRUE(entries_of(m_dest).empty());
}

TEST_F(TlsDownloaderTest, RedirectFromHttpsToHttpIsRefused) {
    std::string plain = m_server->url("/a.bin");
    std::string encoded;
    for (char c : plain) {
        encoded += (c == ':' ? "%3A" : c == '/' ? "%2F" : std::string(1, c));
    }
    auto result = download(tls_request("/redirect-to/" + encoded));
    ASSERT_FALSE(result);
    EXPECT_TRUE(contains(result.error().message(), "downgrade"));
    EXPECT_TRUE(contains(result.error().message(), plain));
    EXPECT_EQ(m_server->total_requests(), 0) << "the http server was never asked";
    EXPECT_TRUE(entries_of(m_dest).empty());
}

} // namespace fetch_downloader
} // namespace
} // namespace shimkeeper::fetch
