// The real Downloader: libcurl for http(s) and file:// URLs, with retries, limits, progress
// and SHA-256 verification. See curl_transfer.hpp for one attempt, retry_policy.hpp for when
// another one is made.
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
