// The real Downloader: libcurl for http(s) and file:// URLs, with retries, limits, progress
// and SHA-256 verification. See curl_transfer.hpp for one attempt, retry_policy.hpp for when
// another one is made.
//
// Limits from spec::FetchSettings: connect_timeout per connection, stall_timeout for a silence
// anywhere in an attempt, total_timeout per attempt (its redirect hops included; backoff waits
// are not counted), max_size checked against Content-Length before the body and again on every
// chunk. Proxies come from the usual environment variables (libcurl's default); TLS peer and
// host verification are always on, ca_bundle replaces the system CA store when set.
#pragma once

#include "shimkeeper/fetch/downloader.hpp"

#include <chrono>
#include <random>

namespace shimkeeper::fetch {

class CurlDownloader final : public Downloader {
public:
    static constexpr std::chrono::milliseconds k_default_backoff_base{500};

    // `backoff_base` is the wait before the first retry (it doubles per retry, with jitter);
    // tests pass a few milliseconds.
    explicit CurlDownloader(ProgressStyle style,
                            std::chrono::milliseconds backoff_base = k_default_backoff_base);

    util::Expected<DownloadResult> download(const DownloadRequest& request,
                                            const std::filesystem::path& dest_dir) override;

private:
    ProgressStyle m_style;
    std::chrono::milliseconds m_backoff_base;
    std::minstd_rand m_random; // jitter only: no need for a strong generator
};

} // namespace shimkeeper::fetch
