// One API server connection's settings, and the libcurl handles made from them. Every request,
// a one-shot call or a long watch, is a Transfer prepared here, so TLS verification, credentials
// and headers are set in one place.
#pragma once

#include "shimkeeper/kubeapi/bearer_token.hpp"
#include "shimkeeper/kubeapi/kubeconfig.hpp"
#include "shimkeeper/kubeapi/request_bound.hpp"
#include "shimkeeper/kubeapi/request_stats.hpp"
#include "shimkeeper/util/curl_handles.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <curl/curl.h>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::kubeapi {

enum class Method { get, post, put, patch, del };
const char* method_name(Method method);

// One HTTP exchange. Heap-allocated and never moved once prepared: libcurl keeps pointers to the
// header list, the request body, the error buffer and to the Transfer itself.
struct Transfer {
    Method method = Method::get;
    std::string path; // path and query, for messages
    util::CurlEasy easy;
    util::CurlSlist headers;
    std::string request_body;
    std::string response_body;
    std::string bearer; // the token sent, to tell a renewed one after a 401
    char error_buffer[CURL_ERROR_SIZE] = {};
    // Set for a watch: a 200's body goes here as it arrives (false aborts the transfer); any
    // other status's body is still collected into response_body, for its Status.
    std::function<bool(std::string_view)> on_data;

    long http_code() const;
    // The transport failure as a message: libcurl's words and its detail.
    std::string failure(CURLcode rc) const;
};

struct Response {
    long http_code = 0;
    std::string body;
    long retry_after = -1;    // seconds, from a Retry-After header; -1 without one
    long new_connections = 0; // connections this exchange had to open (0: it reused one)

    bool ok() const { return http_code >= 200 && http_code < 300; }
};

// Closes the connections this thread's requests keep for reuse (Connection::perform shares one
// cache per thread); the next request opens a new one. After a request that timed out with no
// answer, its connection may be dead (a peer gone without a reset): kept, the next request
// would be multiplexed onto it and wait as long again. Only between requests of this thread.
void drop_thread_connections();

class Connection {
public:
    explicit Connection(KubeConfig config) : m_config(std::move(config)), m_token(m_config) {}

    const KubeConfig& config() const { return m_config; }

    // A ready handle: URL, method, body, TLS, credentials. content_type empty: no body.
    util::Expected<std::unique_ptr<Transfer>> prepare(Method method, std::string path,
                                                      std::string body = {},
                                                      std::string_view content_type = {});

    // Runs a prepared transfer to the end (blocking, at most request_time() long: see
    // request_bound.hpp). Only transport failures are errors; any HTTP status is a Response.
    util::Expected<Response> perform(Transfer& transfer);
    // Runs prepared transfers at once and waits for all of them, each within request_time():
    // multiplexed as streams of one HTTP/2 connection when the server speaks it (the API server
    // does), so n writes take about one round trip and one commit instead of n of each. Results
    // in the order given, as perform() gives them.
    std::vector<util::Expected<Response>> perform_together(const std::vector<Transfer*>& transfers);

    std::chrono::milliseconds request_time() const { return m_request_time; }
    void set_request_time(std::chrono::milliseconds bound) { m_request_time = bound; }

    // After a 401 to `transfer`: whether the token file now holds another token (bearer_token.hpp).
    bool renew_token_after_refusal(const Transfer& transfer) {
        return m_token.renew_after_refusal(transfer.bearer);
    }
    // Where perform() records each request's outcome and time; none by default. Copies of the
    // connection (a client made from this one) share it.
    void set_stats(std::shared_ptr<RequestStats> stats) { m_stats = std::move(stats); }
    const std::shared_ptr<RequestStats>& stats() const { return m_stats; }

private:
    util::Expected<void> set_bound_and_cache(Transfer& transfer);
    util::Expected<Response> finished(Transfer& transfer, CURLcode rc,
                                      std::chrono::steady_clock::time_point started);

    KubeConfig m_config;
    BearerToken m_token;
    std::shared_ptr<RequestStats> m_stats;
    std::chrono::milliseconds m_request_time = request_time_bound();
};

} // namespace shimkeeper::kubeapi
