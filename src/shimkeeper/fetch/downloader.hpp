// The download seam. Business logic (reconcile, fetch command) talks to a Downloader; the real
// one is CurlDownloader. Tests of that logic use the real one too, on file:// URLs and the local
// artifact server, because both run here; the seam stays for edges that cannot (a registry).
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::fetch {

// What the last answer of a download said besides its body: the OCI client needs the status
// and challenge of a 401, and the media type of a manifest.
struct ResponseInfo {
    long status = 0;
    std::string content_type;
    std::string www_authenticate;
};

struct DownloadRequest {
    std::string url;                            // http://, https:// or file://
    std::optional<std::string> expected_sha256; // lowercase hex; absent = unverified
    spec::FetchSettings settings;
    std::string label; // shim name, shown in progress output
    // Called while a transfer is alive and between retries: the daemon passes its watchdog
    // ping here, so a long download over a slow link never looks like a hung process.
    std::function<void()> heartbeat;
    // Asked as often as the heartbeat is called and before each retry: true stops the download
    // (it fails, naming no server fault, and leaves nothing behind). Staging ahead in the
    // background stops this way when its Shim no longer waits or the daemon stops.
    std::function<bool()> abandon;
    // Extra request headers ("Accept: ...", "Authorization: ..."). An Authorization header goes
    // only to the first URL's origin: a redirect elsewhere (a registry's storage URL) is
    // followed without it, as credentials are meant for the registry alone.
    std::vector<std::string> headers;
    // When set, filled in from the last answer, also when the download fails.
    ResponseInfo* response = nullptr;
};

struct DownloadResult {
    std::filesystem::path file; // a temp file inside dest_dir; the caller renames or removes it
    std::string sha256;         // lowercase hex of the bytes in `file`
    std::uint64_t size = 0;
    int attempts = 0; // 1 when the first attempt succeeded
};

enum class ProgressStyle { bar, lines, none };

class Downloader {
public:
    virtual ~Downloader() = default;

    // Streams the body into a new temp file inside dest_dir (same filesystem as the store, so
    // the caller can rename it), hashing in the same pass. On any failure nothing is left in
    // dest_dir.
    virtual util::Expected<DownloadResult> download(const DownloadRequest& request,
                                                    const std::filesystem::path& dest_dir) = 0;
};

// A bar when stderr is a terminal, plain lines otherwise (logs, CI, journald).
ProgressStyle progress_style_for_stderr();

} // namespace shimkeeper::fetch
