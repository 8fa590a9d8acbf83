#include "shimkeeper/fetch/curl_transfer.hpp"

#include "shimkeeper/fetch/curl_codes.hpp"
#include "shimkeeper/fetch/url_policy.hpp"
#include "shimkeeper/util/curl_handles.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>

namespace shimkeeper::fetch {

using util::CurlSlist;
using util::set_curl_option;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr long k_buffer_size = 128 * 1024;

// What the callbacks share with the hop that runs them.
struct HopContext {
    CURL* handle = nullptr;
    PartialFile* file = nullptr;
    Progress* progress = nullptr;
    const std::function<void()>* heartbeat = nullptr;
    const std::function<bool()>* abandon = nullptr;
    std::uint64_t max_size = 0;
    milliseconds stall_timeout{0};

    bool status_known = false;
    bool body_wanted = false; // a 2xx (or file://) body: anything else is drained and dropped
    curl_off_t last_received = -1;
    Clock::time_point last_activity = Clock::now();

    bool stalled = false;
    bool abandoned = false;
    std::optional<std::uint64_t> announced_too_large; // Content-Length above max_size
    bool grew_too_large = false;
    std::optional<util::Error> write_error;
};

std::string seconds_text(milliseconds value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(value.count()) / 1000);
    return text;
}

// 2xx, or 0 for file:// (no HTTP status at all).
bool is_success(long status) {
    return status == 0 || (status >= 200 && status < 300);
}

void learn_status(HopContext& hop) {
    hop.status_known = true;
    long status = 0;
    curl_easy_getinfo(hop.handle, CURLINFO_RESPONSE_CODE, &status);
    hop.body_wanted = is_success(status);
    if (!hop.body_wanted) {
        return;
    }
    curl_off_t length = -1;
    curl_easy_getinfo(hop.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    // A resumed body announces only the rest: what the file already holds counts too.
    if (length > 0 && hop.file->size() + static_cast<std::uint64_t>(length) > hop.max_size) {
        hop.announced_too_large = hop.file->size() + static_cast<std::uint64_t>(length);
    }
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto& hop = *static_cast<HopContext*>(user);
    size_t length = size * count;
    if (!hop.status_known) {
        learn_status(hop);
    }
    if (!hop.body_wanted) {
        return length;
    }
    if (hop.announced_too_large) {
        return 0;
    }
    if (hop.file->size() + length > hop.max_size) {
        hop.grew_too_large = true;
        return 0;
    }
    if (auto written = hop.file->append(std::string_view(data, length)); !written) {
        hop.write_error = std::move(written).error();
        return 0;
    }
    return length;
}

int on_progress(void* user, curl_off_t total, curl_off_t received, curl_off_t, curl_off_t) {
    auto& hop = *static_cast<HopContext*>(user);
    if (hop.heartbeat != nullptr && *hop.heartbeat) {
        (*hop.heartbeat)(); // curl calls this about once a second even while no byte arrives
    }
    if (hop.abandon != nullptr && *hop.abandon && (*hop.abandon)()) {
        hop.abandoned = true;
        return 1; // aborts the transfer
    }
    auto now = Clock::now();
    if (received != hop.last_received) {
        hop.last_received = received;
        hop.last_activity = now;
    } else if (now - hop.last_activity >= hop.stall_timeout) {
        hop.stalled = true;
        return 1; // aborts the transfer
    }
    if (hop.body_wanted) {
        hop.progress->update(hop.file->size(), total > 0 ? static_cast<std::uint64_t>(total) : 0);
    }
    return 0;
}

AttemptError failure(FailureKind kind, std::string reason,
                     util::ErrorCode code = util::ErrorCode::network) {
    return AttemptError{AttemptFailure{kind, 0, std::nullopt}, code, std::move(reason)};
}

// Turns a failed curl_easy_perform into the reason the user sees, preferring what our own
// callbacks knew over libcurl's generic "aborted by callback" / "write error".
AttemptError perform_failure(const HopContext& hop, CURLcode rc, const char* error_buffer,
                             const spec::FetchSettings& settings) {
    if (hop.write_error) {
        return failure(FailureKind::local, hop.write_error->message(), util::ErrorCode::io);
    }
    std::string limit = format_bytes(settings.max_size) + " limit (fetch max_size)";
    if (hop.announced_too_large) {
        return failure(FailureKind::too_large, "the server announces " +
                                                   format_bytes(*hop.announced_too_large) +
                                                   ", more than the " + limit);
    }
    if (hop.grew_too_large) {
        return failure(FailureKind::too_large, "the body grew past the " + limit);
    }
    if (hop.abandoned) {
        return failure(FailureKind::abandoned, "stopped: no longer wanted");
    }
    if (hop.stalled) {
        return failure(FailureKind::stall, "no data received for " +
                                               seconds_text(settings.stall_timeout) +
                                               " (fetch stall_timeout)");
    }
    std::string reason = curl_easy_strerror(rc);
    if (error_buffer[0] != '\0') {
        reason += ": ";
        reason += error_buffer;
    }
    FailureKind kind = failure_kind_for(rc);
    auto code =
        rc == CURLE_FILE_COULDNT_READ_FILE ? util::ErrorCode::not_found : util::ErrorCode::network;
    return failure(kind, std::move(reason), code);
}

bool is_authorization(const std::string& header) {
    constexpr std::string_view k_name = "authorization:";
    return header.size() >= k_name.size() &&
           std::equal(k_name.begin(), k_name.end(), header.begin(), [](char a, char b) {
               return a == std::tolower(static_cast<unsigned char>(b));
           });
}

// The request headers as libcurl lists: all of them, and all but Authorization (for hops that
// left the first URL's origin).
util::Expected<std::pair<CurlSlist, CurlSlist>> header_lists(const DownloadRequest& request) {
    CurlSlist all;
    CurlSlist anonymous;
    for (const std::string& header : request.headers) {
        for (CurlSlist* list : {&all, &anonymous}) {
            if (list == &anonymous && is_authorization(header)) {
                continue;
            }
            curl_slist* grown = curl_slist_append(list->get(), header.c_str());
            if (grown == nullptr) {
                return util::fail(util::ErrorCode::internal, "out of memory for request headers");
            }
            (void)list->release();
            list->reset(grown);
        }
    }
    return std::pair{std::move(all), std::move(anonymous)};
}

void record_response(CURL* handle, ResponseInfo* response) {
    if (response == nullptr) {
        return;
    }
    *response = ResponseInfo{};
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response->status);
    const char* type = nullptr;
    if (curl_easy_getinfo(handle, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) {
        response->content_type = type;
    }
    curl_header* challenge = nullptr;
    if (curl_easy_header(handle, "WWW-Authenticate", 0, CURLH_HEADER, -1, &challenge) ==
        CURLHE_OK) {
        response->www_authenticate = challenge->value;
    }
}

std::optional<std::chrono::seconds> retry_after_of(CURL* handle) {
    curl_off_t seconds = 0;
    if (curl_easy_getinfo(handle, CURLINFO_RETRY_AFTER, &seconds) == CURLE_OK && seconds > 0) {
        return std::chrono::seconds(seconds);
    }
    return std::nullopt;
}

} // namespace

util::Expected<void> configure_handle(CURL* handle, const spec::FetchSettings& settings,
                                      char* error_buffer) {
    TRY(set_curl_option(handle, CURLOPT_NOSIGNAL, 1L, "NOSIGNAL"));
    TRY(set_curl_option(handle, CURLOPT_ERRORBUFFER, error_buffer, "ERRORBUFFER"));
    TRY(set_curl_option(handle, CURLOPT_PROTOCOLS_STR, "http,https,file", "PROTOCOLS_STR"));
    // Redirects are followed by hand (see url_policy); this is a second fence.
    TRY(set_curl_option(handle, CURLOPT_FOLLOWLOCATION, 0L, "FOLLOWLOCATION"));
    TRY(set_curl_option(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https", "REDIR_PROTOCOLS_STR"));
    TRY(set_curl_option(handle, CURLOPT_SSL_VERIFYPEER, 1L, "SSL_VERIFYPEER"));
    TRY(set_curl_option(handle, CURLOPT_SSL_VERIFYHOST, 2L, "SSL_VERIFYHOST"));
    if (settings.ca_bundle) {
        TRY(set_curl_option(handle, CURLOPT_CAINFO, settings.ca_bundle->c_str(), "CAINFO"));
    }
    TRY(set_curl_option(handle, CURLOPT_CONNECTTIMEOUT_MS,
                        static_cast<long>(settings.connect_timeout.count()), "CONNECTTIMEOUT_MS"));
    TRY(set_curl_option(handle, CURLOPT_BUFFERSIZE, k_buffer_size, "BUFFERSIZE"));
    TRY(set_curl_option(handle, CURLOPT_USERAGENT, "shimkeeper/" SHIMKEEPER_VERSION, "USERAGENT"));
    TRY(set_curl_option(handle, CURLOPT_NOPROGRESS, 0L, "NOPROGRESS"));
    TRY(set_curl_option(handle, CURLOPT_WRITEFUNCTION, &on_body, "WRITEFUNCTION"));
    TRY(set_curl_option(handle, CURLOPT_XFERINFOFUNCTION, &on_progress, "XFERINFOFUNCTION"));
    return {};
}

std::expected<void, AttemptError> run_attempt(CURL* handle, const DownloadRequest& request,
                                              PartialFile& file, Progress& progress,
                                              char* error_buffer, std::uint64_t resume_from) {
    const spec::FetchSettings& settings = request.settings;
    auto deadline = Clock::now() + settings.total_timeout;
    std::string url = request.url;
    bool secure_so_far = false;
    auto headers = header_lists(request);
    if (!headers) {
        return std::unexpected(
            failure(FailureKind::other, headers.error().message(), util::ErrorCode::internal));
    }
    for (int redirects = 0;; ++redirects) {
        // Rounded up: with under a millisecond left the transfer still has time, not a timeout.
        auto remaining = std::chrono::ceil<milliseconds>(deadline - Clock::now());
        if (remaining <= milliseconds(0)) {
            return std::unexpected(
                failure(FailureKind::timeout, "no complete answer within " +
                                                  seconds_text(settings.total_timeout) +
                                                  " (fetch total_timeout)"));
        }
        HopContext hop;
        hop.handle = handle;
        hop.file = &file;
        hop.progress = &progress;
        hop.heartbeat = &request.heartbeat;
        hop.abandon = &request.abandon;
        hop.max_size = settings.max_size;
        hop.stall_timeout = settings.stall_timeout;
        auto set = [&]() -> util::Expected<void> {
            TRY(set_curl_option(handle, CURLOPT_URL, url.c_str(), "URL"));
            curl_slist* list =
                same_origin(request.url, url) ? headers->first.get() : headers->second.get();
            TRY(set_curl_option(handle, CURLOPT_HTTPHEADER, list, "HTTPHEADER"));
            TRY(set_curl_option(handle, CURLOPT_RESUME_FROM_LARGE,
                                static_cast<curl_off_t>(resume_from), "RESUME_FROM_LARGE"));
            TRY(set_curl_option(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining.count()),
                                "TIMEOUT_MS"));
            TRY(set_curl_option(handle, CURLOPT_WRITEDATA, static_cast<void*>(&hop), "WRITEDATA"));
            TRY(set_curl_option(handle, CURLOPT_XFERINFODATA, static_cast<void*>(&hop),
                                "XFERINFODATA"));
            return {};
        }();
        if (!set) {
            return std::unexpected(
                failure(FailureKind::other, set.error().message(), util::ErrorCode::internal));
        }
        error_buffer[0] = '\0';
        CURLcode rc = curl_easy_perform(handle);
        record_response(handle, request.response);
        if (rc != CURLE_OK) {
            return std::unexpected(perform_failure(hop, rc, error_buffer, settings));
        }
        long status = 0;
        curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
        if (is_success(status)) {
            return {};
        }
        if (status >= 300 && status < 400 && status != 304) {
            const char* location = nullptr;
            curl_easy_getinfo(handle, CURLINFO_REDIRECT_URL, &location);
            if (location == nullptr) {
                return std::unexpected(
                    failure(FailureKind::refused, "HTTP " + std::to_string(status) + " from " +
                                                      url + " without a Location to follow"));
            }
            if (redirects + 1 > k_max_redirects) {
                return std::unexpected(failure(FailureKind::refused,
                                               "more than " + std::to_string(k_max_redirects) +
                                                   " redirects (the last one from " + url + ")"));
            }
            if (auto allowed = check_redirect(url, location, secure_so_far); !allowed) {
                return std::unexpected(failure(FailureKind::refused, allowed.error().message()));
            }
            secure_so_far = secure_so_far || scheme_of(url) == UrlScheme::https;
            url = location;
            continue;
        }
        AttemptError error = failure(FailureKind::http_status,
                                     "HTTP " + std::to_string(status) +
                                         (url == request.url ? std::string() : " from " + url));
        error.failure.http_status = status;
        error.failure.retry_after = retry_after_of(handle);
        if (status == 404 || status == 410) {
            error.code = util::ErrorCode::not_found;
        }
        if (status == 416 && resume_from > 0) {
            error.failure.kind = FailureKind::no_resume;
        }
        return std::unexpected(std::move(error));
    }
}

} // namespace shimkeeper::fetch
