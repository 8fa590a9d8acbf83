// When a failed download attempt is worth repeating, and how long to wait first. Pure
// functions of the failure and the attempt number; the curl edge maps its codes onto
// FailureKind, the downloader sleeps and counts.
//
// Retried: failures that another try can plausibly cure (the server was unreachable, slow,
// overloaded or cut the transfer short; HTTP 5xx, 429 and 408). Not retried: answers that will
// not change (other 4xx, TLS verification, refused redirects, size cap, a local disk error).
#pragma once

#include <chrono>
#include <optional>

namespace shimkeeper::fetch {

enum class FailureKind {
    connect,     // could not resolve or connect
    timeout,     // connect timeout or total timeout
    stall,       // no bytes for stall_timeout
    transfer,    // connection broke mid-transfer, short body, empty reply
    http_status, // the final response was not 2xx
    tls,         // certificate or handshake verification failed
    refused,     // a redirect we will not follow, or too many
    too_large,   // the body exceeds max_size
    no_resume,   // a resumed request was not answered with the rest (no Range support, 416)
    local,       // writing the temp file failed
    other,       // anything else libcurl reports
    abandoned,   // the caller asked to stop (DownloadRequest::abandon)
};

enum class Retry { yes, no };

struct AttemptFailure {
    FailureKind kind = FailureKind::other;
    long http_status = 0;                            // with FailureKind::http_status
    std::optional<std::chrono::seconds> retry_after; // the server's Retry-After, if any
};

Retry retry_for(const AttemptFailure& failure);

// Retry-After values above this are not honoured: our own backoff applies instead, so a
// hostile or confused server cannot park the agent for hours.
inline constexpr std::chrono::seconds k_max_retry_after{30};
// No computed backoff exceeds this.
inline constexpr std::chrono::milliseconds k_max_backoff{30'000};

// The wait before retry number `retry` (1 = the wait after the first failed attempt):
// base * 2^(retry-1), capped at k_max_backoff, scaled into [50%, 100%] by `jitter` in [0, 1)
// so that many nodes failing together do not retry in lockstep. A small Retry-After
// (<= k_max_retry_after) raises the wait to at least that value.
std::chrono::milliseconds backoff_delay(int retry, std::chrono::milliseconds base, double jitter,
                                        std::optional<std::chrono::seconds> retry_after);

} // namespace shimkeeper::fetch
