#include "shimkeeper/fetch/curl_downloader.hpp"

#include "shimkeeper/fetch/curl_transfer.hpp"
#include "shimkeeper/fetch/partial_file.hpp"
#include "shimkeeper/fetch/progress.hpp"
#include "shimkeeper/fetch/retry_policy.hpp"
#include "shimkeeper/fetch/url_policy.hpp"
#include "shimkeeper/util/curl_handles.hpp"

#include <algorithm>
#include <cctype>
#include <thread>

namespace shimkeeper::fetch {

using util::CurlEasy;
using util::make_curl_easy;

namespace {

std::string lowercase(std::string text) {
    std::ranges::transform(text, text.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// Waits between attempts, asking request.abandon ten times a second; false when it said stop.
bool wait_unless_abandoned(const DownloadRequest& request, std::chrono::milliseconds wait) {
    if (!request.abandon) {
        std::this_thread::sleep_for(wait);
        return true;
    }
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!request.abandon()) {
        const auto left = until - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) {
            return true;
        }
        std::this_thread::sleep_for(
            std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(100)));
    }
    return false;
}

std::string attempts_text(int attempts) {
    return attempts == 1 ? "1 attempt" : std::to_string(attempts) + " attempts";
}

} // namespace

CurlDownloader::CurlDownloader(ProgressStyle style, std::chrono::milliseconds backoff_base)
    : m_style(style), m_backoff_base(backoff_base), m_random(std::random_device{}()) {}

util::Expected<DownloadResult> CurlDownloader::download(const DownloadRequest& request,
                                                        const std::filesystem::path& dest_dir) {
    std::string what = request.label.empty() ? request.url : request.label;
    if (auto usable = check_initial_url(request.url); !usable) {
        return std::unexpected(std::move(usable).error().with_context("cannot download " + what));
    }
    PartialFile file = TRY(PartialFile::create(dest_dir));
    char error_buffer[CURL_ERROR_SIZE] = {}; // outlives the handle that writes into it
    CurlEasy handle = TRY(make_curl_easy());
    TRY(configure_handle(handle.get(), request.settings, error_buffer));

    Progress progress(m_style, what);
    progress.start(request.url);
    const int max_attempts = 1 + std::max(request.settings.retries, 0);
    std::uint64_t resume_from = 0;
    bool resumed = false;
    int attempt = 1;
    for (;; ++attempt) {
        if (attempt > 1 && resume_from == 0) {
            TRY(file.restart());
        }
        resumed = resumed || resume_from > 0;
        auto outcome =
            run_attempt(handle.get(), request, file, progress, error_buffer, resume_from);
        if (outcome) {
            if (!request.expected_sha256 || !resumed || attempt == max_attempts) {
                break;
            }
            // A body put together from two responses is checked before it is trusted; if the
            // pieces do not match (the file changed on the server in between), one more try
            // from the start rather than a checksum error.
            auto digest = file.peek_digest();
            if (lowercase(*request.expected_sha256) == digest) {
                break;
            }
            progress.retrying(attempt, "the resumed download does not match its sha256",
                              std::chrono::milliseconds(0));
            resume_from = 0;
            resumed = false;
            continue;
        }
        const AttemptError& error = outcome.error();
        if (retry_for(error.failure) == Retry::no || attempt == max_attempts) {
            progress.abandon();
            std::string hint = retry_for(error.failure) == Retry::yes
                                   ? "; check that the server is reachable from this node "
                                     "(proxy settings come from http_proxy/https_proxy)"
                                   : "";
            return util::fail(error.code, "cannot download " + what + " from " + request.url +
                                              ": " + error.reason + " (" + attempts_text(attempt) +
                                              ")" + hint);
        }
        // A body that broke off mid-way is continued where it stopped, when the sha256 will
        // prove the joined result; anything else (and an unverified download) starts over.
        const bool broke_off = error.failure.kind == FailureKind::stall ||
                               error.failure.kind == FailureKind::transfer ||
                               error.failure.kind == FailureKind::timeout;
        resume_from =
            request.expected_sha256 && broke_off && file.size() > resume_from ? file.size() : 0;
        std::uniform_real_distribution<double> jitter(0.0, 1.0);
        auto wait =
            backoff_delay(attempt, m_backoff_base, jitter(m_random), error.failure.retry_after);
        progress.retrying(attempt,
                          resume_from > 0
                              ? error.reason + "; resuming at byte " + std::to_string(resume_from)
                              : error.reason,
                          wait);
        if (request.heartbeat) {
            request.heartbeat(); // a Retry-After wait is at most 30 s, far below any watchdog
        }
        if (!wait_unless_abandoned(request, wait)) {
            progress.abandon();
            return util::fail(util::ErrorCode::network, "cannot download " + what + " from " +
                                                            request.url +
                                                            ": stopped: no longer wanted");
        }
    }

    std::uint64_t size = file.size();
    std::string digest = TRY(file.finish());
    if (request.expected_sha256 && lowercase(*request.expected_sha256) != digest) {
        progress.abandon();
        return util::fail(util::ErrorCode::checksum,
                          "checksum mismatch for " + what + " from " + request.url +
                              ": expected sha256 " + lowercase(*request.expected_sha256) +
                              ", got " + digest + " (" + format_bytes(size) +
                              "); the download was discarded. Check fetch.sha256 and fetch.url "
                              "in the shim's TOML");
    }
    progress.done(size, digest);
    return DownloadResult{file.keep(), digest, size, attempt};
}

} // namespace shimkeeper::fetch
