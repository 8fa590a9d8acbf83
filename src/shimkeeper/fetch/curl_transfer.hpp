// One download attempt on a libcurl handle: the request, then each redirect hop checked
// against url_policy and followed by hand (libcurl's own following is off, so that every hop
// is judged with the whole chain in view), the body streamed into a PartialFile while the
// stall, size and time limits are watched.
#pragma once

#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/fetch/partial_file.hpp"
#include "shimkeeper/fetch/progress.hpp"
#include "shimkeeper/fetch/retry_policy.hpp"

#include <curl/curl.h>
#include <expected>
#include <string>

namespace shimkeeper::fetch {

struct AttemptError {
    AttemptFailure failure;
    util::ErrorCode code = util::ErrorCode::network;
    std::string reason; // "HTTP 503 from <url>", "no data for 2.0 s", curl's message
};

// Sets the options every hop shares (TLS, timeouts, protocols, CA bundle, user agent).
util::Expected<void> configure_handle(CURL* handle, const spec::FetchSettings& settings,
                                      char* error_buffer);

// Runs one attempt. On success the whole body is in `file`. `resume_from` > 0 asks for the
// rest of the body from that offset (an HTTP Range request), appended to what `file` holds; a
// server that ignores the range makes the attempt fail (libcurl's CURLE_RANGE_ERROR), and the
// caller starts over.
std::expected<void, AttemptError> run_attempt(CURL* handle, const DownloadRequest& request,
                                              PartialFile& file, Progress& progress,
                                              char* error_buffer, std::uint64_t resume_from = 0);

} // namespace shimkeeper::fetch
