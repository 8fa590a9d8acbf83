#include "shimkeeper/health/grpc_unix_client.hpp"

#include "shimkeeper/health/grpc_frame.hpp"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace shimkeeper::health {

namespace {

// containerd's default max_recv_message_size; a Status answer is a few KiB.
constexpr std::size_t k_max_response = 16u << 20;
// Lost answers come in bursts (after one loss the next call is lost about one time in three on a
// loaded machine, and CI once saw ten in a row): ask again with a growing pause, within the
// call's timeout.
constexpr int k_lost_answer_attempts = 40;
constexpr std::chrono::milliseconds k_lost_answer_pause_step{5};
constexpr std::chrono::milliseconds k_lost_answer_pause_max{100};

struct Exchange {
    std::string body;
    std::vector<std::string> header_lines;
    bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* exchange = static_cast<Exchange*>(user);
    const std::size_t bytes = size * count;
    if (exchange->body.size() + bytes > k_max_response) {
        exchange->too_large = true;
        return 0; // aborts the transfer with CURLE_WRITE_ERROR
    }
    exchange->body.append(data, bytes);
    return bytes;
}

// Receives response headers and, for HTTP/2, the trailers too.
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto* exchange = static_cast<Exchange*>(user);
    exchange->header_lines.emplace_back(data, size * count);
    return size * count;
}

std::string hint_for(int grpc_code) {
    switch (grpc_code) {
    case 12:
        return " (the service is not registered: for runtime.v1.RuntimeService the CRI plugin did "
               "not start; see containerd's log for a CRI config error)";
    case 14:
        return " (containerd is starting or stopping; retry)";
    default:
        return "";
    }
}

} // namespace

GrpcUnixClient::GrpcUnixClient(std::string socket_path) : m_socket_path(std::move(socket_path)) {}

util::Expected<std::string> GrpcUnixClient::call(std::string_view method, std::string_view request,
                                                 std::chrono::milliseconds timeout,
                                                 Idempotent idempotent) {
    const std::string where = "gRPC " + std::string(method) + " on " + m_socket_path;
    if (!m_curl) {
        m_curl = TRY(util::make_curl_easy()); // also runs curl_global_init once
        curl_slist* list = nullptr;
        for (const char* header : {"content-type: application/grpc", "te: trailers",
                                   "user-agent: shimkeeper", "expect:"}) {
            curl_slist* extended = curl_slist_append(list, header);
            if (extended == nullptr) {
                curl_slist_free_all(list);
                return util::fail(util::ErrorCode::internal, where + ": out of memory");
            }
            list = extended;
        }
        m_headers.reset(list);
    }

    const std::string framed = frame_message(request);
    const std::string url = "http://localhost" + std::string(method);
    Exchange exchange;
    CURL* curl = m_curl.get();
    const long timeout_ms = static_cast<long>(std::max<std::int64_t>(1, timeout.count()));
    const CURLcode setup[] = {
        curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, m_socket_path.c_str()),
        curl_easy_setopt(curl, CURLOPT_URL, url.c_str()),
        curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE}),
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, m_headers.get()),
        curl_easy_setopt(curl, CURLOPT_POST, 1L),
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, framed.data()),
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(framed.size())),
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &on_body),
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &exchange),
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &on_header),
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, &exchange),
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms),
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms),
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L),
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http"),
        // Debian 12's libcurl 7.88.1 fails the second request on a reused HTTP/2 connection to
        // containerd's Go gRPC server ("Error in the HTTP2 framing layer"), seen here with the
        // curl tool too. A unix-socket connect costs well under a millisecond: connect per call.
        curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L),
    };
    for (const CURLcode rc : setup) {
        if (rc != CURLE_OK) {
            return util::fail(util::ErrorCode::internal,
                              where + ": curl option refused: " + curl_easy_strerror(rc));
        }
    }

    // When a server answers before it has read the whole request (containerd's trailers-only
    // UNIMPLEMENTED does), it resets the stream right after its answer; Debian's curl 7.88 then
    // sometimes drops the answer and reports only CURLE_HTTP2_STREAM, in about one call of
    // three here; on a loaded machine now and then CURLE_HTTP2 (a framing error) instead. Nothing
    // reached us (no header line), so an idempotent call is simply asked again.
    const auto start = std::chrono::steady_clock::now();
    CURLcode rc = CURLE_OK;
    for (int attempt = 1;; ++attempt) {
        exchange = Exchange{};
        rc = curl_easy_perform(curl);
        const bool answer_lost =
            (rc == CURLE_HTTP2_STREAM || rc == CURLE_HTTP2) && exchange.header_lines.empty();
        if (!answer_lost || idempotent == Idempotent::no || attempt >= k_lost_answer_attempts ||
            std::chrono::steady_clock::now() - start >= timeout) {
            break;
        }
        std::this_thread::sleep_for(
            std::min(k_lost_answer_pause_step * attempt, k_lost_answer_pause_max));
    }
    // The buffers curl points at die with this call: never leave them set on the handle.
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, nullptr);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, nullptr);
    if (exchange.too_large) {
        return util::fail(util::ErrorCode::external, where + ": response larger than " +
                                                         std::to_string(k_max_response) + " bytes");
    }
    const std::optional<GrpcStatus> status = find_grpc_status(exchange.header_lines);
    // A failed call may come as a trailers-only answer that ends the stream before our request
    // is read; Debian's curl 7.88 then sometimes also reports a stream error (seen with
    // containerd's UNIMPLEMENTED). The server's status is final: it wins over curl's error.
    const bool server_failed_call = status && status->code != 0;
    if (rc != CURLE_OK && !server_failed_call) {
        return util::fail(util::ErrorCode::network,
                          where + ": " + curl_easy_strerror(rc) +
                              " (is containerd running, and is [containerd] socket its address?)");
    }
    long http_status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
    if (http_status != 200) {
        return util::fail(util::ErrorCode::external, where + ": HTTP status " +
                                                         std::to_string(http_status) +
                                                         ", not a gRPC server answering");
    }
    if (!status) {
        return util::fail(util::ErrorCode::external,
                          where + ": the answer carries no grpc-status trailer");
    }
    if (server_failed_call) {
        return util::fail(util::ErrorCode::external, where + ": " + grpc_code_name(status->code) +
                                                         ": " + status->message +
                                                         hint_for(status->code));
    }
    auto message = unframe_unary(exchange.body);
    if (!message) {
        return std::unexpected(std::move(message).error().with_context(where));
    }
    return message;
}

} // namespace shimkeeper::health
