// The pure parts of fetching: which URLs and redirects are allowed, which failures are
// retried, how long the backoff waits, how libcurl's codes are classified.
#include "shimkeeper/fetch/curl_codes.hpp"
#include "shimkeeper/fetch/progress.hpp"
#include "shimkeeper/fetch/retry_policy.hpp"
#include "shimkeeper/fetch/url_policy.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::fetch {
namespace {
namespace fetch_policy {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

TEST(FetchUrlPolicy, SchemesAreRecognisedCaseInsensitively) {
    EXPECT_EQ(scheme_of("https://example.org/a"), UrlScheme::https);
    EXPECT_EQ(scheme_of("HTTP://example.org/a"), UrlScheme::http);
    EXPECT_EQ(scheme_of("file:///srv/a.tar.gz"), UrlScheme::file);
    EXPECT_EQ(scheme_of("ftp://example.org/a"), UrlScheme::other);
    EXPECT_EQ(scheme_of("example.org/a"), UrlScheme::other);
    EXPECT_EQ(scheme_of("https:/example.org"), UrlScheme::other);
}

TEST(FetchUrlPolicy, InitialUrlMayBeHttpHttpsOrFile) {
    EXPECT_TRUE(check_initial_url("http://127.0.0.1/a"));
    EXPECT_TRUE(check_initial_url("https://example.org/a"));
    EXPECT_TRUE(check_initial_url("file:///srv/mirror/a.tar.gz"));
    auto refused = check_initial_url("gopher://example.org/a");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), util::ErrorCode::invalid_input);
    EXPECT_NE(refused.error().message().find("gopher://example.org/a"), std::string::npos);
}

TEST(FetchUrlPolicy, RedirectsStayOnHttpOrUpgrade) {
    EXPECT_TRUE(check_redirect("http://a/x", "http://b/y", false));
    EXPECT_TRUE(check_redirect("http://a/x", "https://b/y", false));
    EXPECT_TRUE(check_redirect("https://a/x", "https://b/y", true));
}

TEST(FetchUrlPolicy, RedirectNeverDowngradesOnceHttpsWasSeen) {
    auto direct = check_redirect("https://a/x", "http://b/y", false);
    ASSERT_FALSE(direct);
    EXPECT_NE(direct.error().message().find("downgrade"), std::string::npos);
    EXPECT_NE(direct.error().message().find("http://b/y"), std::string::npos);
    // http -> https -> http: the middle hop was secure, so the last one is a downgrade too.
    EXPECT_FALSE(check_redirect("http://b/x", "http://c/y", true));
}

TEST(FetchUrlPolicy, RedirectToAnotherSchemeIsRefused) {
    for (const char* target : {"file:///etc/passwd", "ftp://a/b", "gopher://a", "//a/b"}) {
        auto refused = check_redirect("http://a/x", target, false);
        ASSERT_FALSE(refused) << target;
        EXPECT_NE(refused.error().message().find(target), std::string::npos);
    }
}

TEST(FetchUrlPolicy, SameOriginMeansSchemeHostAndPort) {
    EXPECT_TRUE(same_origin("https://r.example.org/v2/a", "https://R.example.org:443/b"));
    EXPECT_TRUE(same_origin("http://127.0.0.1:5000/a", "http://127.0.0.1:5000/b?x=1"));
    EXPECT_FALSE(same_origin("http://127.0.0.1:5000/a", "http://127.0.0.1:5001/a"));
    EXPECT_FALSE(same_origin("https://r.example.org/a", "http://r.example.org/a"));
    EXPECT_FALSE(same_origin("https://r.example.org/a", "https://storage.example.org/a"));
    EXPECT_FALSE(same_origin("not a url", "not a url"));
}

TEST(FetchRetryPolicy, TransientFailuresAreRetried) {
    for (auto kind :
         {FailureKind::connect, FailureKind::timeout, FailureKind::stall, FailureKind::transfer}) {
        EXPECT_EQ(retry_for({kind, 0, std::nullopt}), Retry::yes);
    }
    for (long status : {500L, 502L, 503L, 504L, 429L, 408L}) {
        EXPECT_EQ(retry_for({FailureKind::http_status, status, std::nullopt}), Retry::yes)
            << status;
    }
}

TEST(FetchRetryPolicy, PermanentFailuresAreNot) {
    for (auto kind : {FailureKind::tls, FailureKind::refused, FailureKind::too_large,
                      FailureKind::local, FailureKind::other}) {
        EXPECT_EQ(retry_for({kind, 0, std::nullopt}), Retry::no);
    }
    for (long status : {400L, 401L, 403L, 404L, 410L, 451L}) {
        EXPECT_EQ(retry_for({FailureKind::http_status, status, std::nullopt}), Retry::no) << status;
    }
}

TEST(FetchRetryPolicy, BackoffDoublesWithinItsJitterBand) {
    EXPECT_EQ(backoff_delay(1, 500ms, 0.0, std::nullopt), 250ms);
    EXPECT_EQ(backoff_delay(1, 500ms, 0.999999, std::nullopt), 499ms);
    EXPECT_EQ(backoff_delay(2, 500ms, 0.0, std::nullopt), 500ms);
    EXPECT_EQ(backoff_delay(3, 500ms, 0.0, std::nullopt), 1000ms);
    EXPECT_EQ(backoff_delay(4, 500ms, 0.5, std::nullopt), 3000ms);
}

TEST(FetchRetryPolicy, BackoffIsCappedEvenForHugeRetryNumbers) {
    EXPECT_EQ(backoff_delay(200, 500ms, 0.0, std::nullopt), k_max_backoff / 2);
    EXPECT_LE(backoff_delay(200, 500ms, 1.0, std::nullopt), k_max_backoff);
    EXPECT_EQ(backoff_delay(3, milliseconds(-5), 0.5, std::nullopt), 0ms);
}

TEST(FetchRetryPolicy, SmallRetryAfterIsHonouredLargeOneIgnored) {
    EXPECT_EQ(backoff_delay(1, 10ms, 0.0, std::chrono::seconds(2)), 2000ms);
    EXPECT_EQ(backoff_delay(1, 10ms, 0.0, k_max_retry_after), milliseconds(k_max_retry_after));
    EXPECT_EQ(backoff_delay(1, 10ms, 0.0, std::chrono::hours(5)), 5ms);
    // A Retry-After shorter than our own backoff does not shorten it.
    EXPECT_EQ(backoff_delay(3, 4000ms, 0.0, std::chrono::seconds(1)), 8000ms);
}

TEST(FetchCurlCodes, CodesMapOntoRetryDecisions) {
    EXPECT_EQ(failure_kind_for(CURLE_COULDNT_CONNECT), FailureKind::connect);
    EXPECT_EQ(failure_kind_for(CURLE_COULDNT_RESOLVE_HOST), FailureKind::connect);
    EXPECT_EQ(failure_kind_for(CURLE_OPERATION_TIMEDOUT), FailureKind::timeout);
    EXPECT_EQ(failure_kind_for(CURLE_PARTIAL_FILE), FailureKind::transfer);
    EXPECT_EQ(failure_kind_for(CURLE_GOT_NOTHING), FailureKind::transfer);
    EXPECT_EQ(failure_kind_for(CURLE_PEER_FAILED_VERIFICATION), FailureKind::tls);
    EXPECT_EQ(failure_kind_for(CURLE_UNSUPPORTED_PROTOCOL), FailureKind::refused);
    EXPECT_EQ(failure_kind_for(CURLE_FILE_COULDNT_READ_FILE), FailureKind::other);
}

TEST(FetchProgress, BytesAreShownInBinaryUnits) {
    EXPECT_EQ(format_bytes(0), "0 B");
    EXPECT_EQ(format_bytes(1023), "1023 B");
    EXPECT_EQ(format_bytes(1024), "1.0 KiB");
    EXPECT_EQ(format_bytes(512ull << 20), "512.0 MiB");
    EXPECT_EQ(format_bytes(3ull << 30), "3.0 GiB");
}

} // namespace fetch_policy
} // namespace
} // namespace shimkeeper::fetch
