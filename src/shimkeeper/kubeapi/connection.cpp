#include "shimkeeper/kubeapi/connection.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace shimkeeper::kubeapi {

using util::set_curl_option;

namespace {

// One-shot requests run one after another on a thread (a reconcile, a coordinator pass, a slot
// renewal), each on a fresh easy handle that would open its own TCP and TLS connection: the
// API server would sign a TLS handshake per request, a large share of its CPU in a rollout
// (bench/rollout, BENCH_PPROF). A thread's requests share one connection and TLS session cache
// instead, so they reuse one kept-alive connection. Per thread, because libcurl's shared connection
// cache is not safe between concurrent threads; watches keep the event loop's multi handle's own.
struct ShareDeleter {
    void operator()(CURLSH* share) const { curl_share_cleanup(share); }
};

struct MultiDeleter {
    void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};

std::unique_ptr<CURLSH, ShareDeleter> make_connection_cache() {
    std::unique_ptr<CURLSH, ShareDeleter> made(curl_share_init());
    bool set =
        made &&
        curl_share_setopt(made.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) == CURLSHE_OK &&
        curl_share_setopt(made.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) == CURLSHE_OK &&
        curl_share_setopt(made.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) == CURLSHE_OK;
    return set ? std::move(made) : nullptr; // without it, each request connects anew
}

thread_local std::unique_ptr<CURLSH, ShareDeleter> t_connection_cache;
thread_local bool t_connection_cache_made = false;

CURLSH* thread_connection_cache() {
    if (!t_connection_cache_made) {
        t_connection_cache = make_connection_cache();
        t_connection_cache_made = true;
    }
    return t_connection_cache.get();
}

} // namespace

void drop_thread_connections() {
    t_connection_cache.reset(); // closes them; no transfer of this thread is running
    t_connection_cache_made = false;
}

namespace {

size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto& transfer = *static_cast<Transfer*>(user);
    size_t length = size * count;
    if (transfer.on_data && transfer.http_code() == 200) {
        return transfer.on_data(std::string_view(data, length)) ? length : 0;
    }
    transfer.response_body.append(data, length);
    return length;
}

util::Expected<void> set_pem(CURL* easy, const PemSource& source, CURLoption file_option,
                             CURLoption blob_option, const char* name) {
    if (!source.file.empty()) {
        return set_curl_option(easy, file_option, source.file.c_str(), name);
    }
    if (!source.pem.empty()) {
        curl_blob blob{const_cast<char*>(source.pem.data()), source.pem.size(), CURL_BLOB_COPY};
        return set_curl_option(easy, blob_option, &blob, name);
    }
    return {};
}

util::Expected<util::CurlSlist> append_header(util::CurlSlist list, const std::string& header) {
    curl_slist* grown = curl_slist_append(list.get(), header.c_str());
    if (grown == nullptr) {
        return util::fail(util::ErrorCode::internal, "out of memory building HTTP headers");
    }
    (void)list.release(); // now owned through `grown`
    return util::CurlSlist(grown);
}

} // namespace

const char* method_name(Method method) {
    switch (method) {
    case Method::get:
        return "GET";
    case Method::post:
        return "POST";
    case Method::put:
        return "PUT";
    case Method::patch:
        return "PATCH";
    case Method::del:
        return "DELETE";
    }
    return "GET";
}

long Transfer::http_code() const {
    long code = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
    return code;
}

std::string Transfer::failure(CURLcode rc) const {
    std::string reason =
        std::string(method_name(method)) + " " + path + ": " + curl_easy_strerror(rc);
    if (error_buffer[0] != '\0') {
        reason += ": ";
        reason += error_buffer;
    }
    return reason;
}

util::Expected<std::unique_ptr<Transfer>> Connection::prepare(Method method, std::string path,
                                                              std::string body,
                                                              std::string_view content_type) {
    auto transfer = std::make_unique<Transfer>();
    transfer->method = method;
    transfer->path = std::move(path);
    transfer->request_body = std::move(body);
    transfer->easy = TRY(util::make_curl_easy());
    CURL* easy = transfer->easy.get();
    std::string url = m_config.server + transfer->path;

    TRY(set_curl_option(easy, CURLOPT_URL, url.c_str(), "CURLOPT_URL"));
    TRY(set_curl_option(easy, CURLOPT_PROTOCOLS_STR, "https", "CURLOPT_PROTOCOLS_STR"));
    TRY(set_curl_option(easy, CURLOPT_SSL_VERIFYPEER, 1L, "CURLOPT_SSL_VERIFYPEER"));
    TRY(set_curl_option(easy, CURLOPT_SSL_VERIFYHOST, 2L, "CURLOPT_SSL_VERIFYHOST"));
    TRY(set_pem(easy, m_config.certificate_authority, CURLOPT_CAINFO, CURLOPT_CAINFO_BLOB,
                "CURLOPT_CAINFO"));
    TRY(set_pem(easy, m_config.client_certificate, CURLOPT_SSLCERT, CURLOPT_SSLCERT_BLOB,
                "CURLOPT_SSLCERT"));
    TRY(set_pem(easy, m_config.client_key, CURLOPT_SSLKEY, CURLOPT_SSLKEY_BLOB, "CURLOPT_SSLKEY"));
    TRY(set_curl_option(easy, CURLOPT_NOSIGNAL, 1L, "CURLOPT_NOSIGNAL"));
    TRY(set_curl_option(easy, CURLOPT_CONNECTTIMEOUT_MS,
                        static_cast<long>(std::min<std::int64_t>(10'000, m_request_time.count())),
                        "CURLOPT_CONNECTTIMEOUT_MS"));
    TRY(set_curl_option(easy, CURLOPT_TCP_KEEPALIVE, 1L, "CURLOPT_TCP_KEEPALIVE"));
    TRY(set_curl_option(easy, CURLOPT_ERRORBUFFER, transfer->error_buffer, "CURLOPT_ERRORBUFFER"));
    TRY(set_curl_option(easy, CURLOPT_WRITEFUNCTION, on_body, "CURLOPT_WRITEFUNCTION"));
    TRY(set_curl_option(easy, CURLOPT_WRITEDATA, transfer.get(), "CURLOPT_WRITEDATA"));
    TRY(set_curl_option(easy, CURLOPT_PRIVATE, transfer.get(), "CURLOPT_PRIVATE"));
    TRY(set_curl_option(easy, CURLOPT_USERAGENT, "shimkeeper/" SHIMKEEPER_VERSION,
                        "CURLOPT_USERAGENT"));
    if (method != Method::get) {
        TRY(set_curl_option(easy, CURLOPT_CUSTOMREQUEST, method_name(method),
                            "CURLOPT_CUSTOMREQUEST"));
    }
    if (!content_type.empty()) {
        TRY(set_curl_option(easy, CURLOPT_POSTFIELDS, transfer->request_body.data(),
                            "CURLOPT_POSTFIELDS"));
        TRY(set_curl_option(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                            static_cast<curl_off_t>(transfer->request_body.size()),
                            "CURLOPT_POSTFIELDSIZE_LARGE"));
    }

    util::CurlSlist headers;
    headers = TRY(append_header(std::move(headers), "Accept: application/json"));
    headers = TRY(append_header(std::move(headers), "Expect:")); // no 100-continue round trip
    if (!content_type.empty()) {
        headers =
            TRY(append_header(std::move(headers), "Content-Type: " + std::string(content_type)));
    }
    std::string token = TRY(m_token.current());
    if (!token.empty()) {
        headers = TRY(append_header(std::move(headers), "Authorization: Bearer " + token));
    }
    transfer->bearer = std::move(token);
    transfer->headers = std::move(headers);
    TRY(set_curl_option(easy, CURLOPT_HTTPHEADER, transfer->headers.get(), "CURLOPT_HTTPHEADER"));
    return transfer;
}

util::Expected<void> Connection::set_bound_and_cache(Transfer& transfer) {
    TRY(set_curl_option(transfer.easy.get(), CURLOPT_TIMEOUT_MS,
                        static_cast<long>(m_request_time.count()), "CURLOPT_TIMEOUT_MS"));
    if (CURLSH* share = thread_connection_cache()) {
        TRY(set_curl_option(transfer.easy.get(), CURLOPT_SHARE, share, "CURLOPT_SHARE"));
    }
    return {};
}

util::Expected<Response> Connection::finished(Transfer& transfer, CURLcode rc,
                                              std::chrono::steady_clock::time_point started) {
    if (m_stats) {
        m_stats->record(method_name(transfer.method), rc == CURLE_OK ? transfer.http_code() : 0,
                        std::chrono::steady_clock::now() - started);
    }
    if (rc != CURLE_OK) {
        return util::fail(util::ErrorCode::network, transfer.failure(rc));
    }
    curl_off_t retry_after = -1;
    if (curl_easy_getinfo(transfer.easy.get(), CURLINFO_RETRY_AFTER, &retry_after) != CURLE_OK ||
        retry_after <= 0) {
        retry_after = -1;
    }
    long connects = 0;
    curl_easy_getinfo(transfer.easy.get(), CURLINFO_NUM_CONNECTS, &connects);
    return Response{transfer.http_code(), std::move(transfer.response_body),
                    static_cast<long>(retry_after), connects};
}

util::Expected<Response> Connection::perform(Transfer& transfer) {
    TRY(set_bound_and_cache(transfer));
    const auto started = std::chrono::steady_clock::now();
    return finished(transfer, curl_easy_perform(transfer.easy.get()), started);
}

std::vector<util::Expected<Response>>
Connection::perform_together(const std::vector<Transfer*>& transfers) {
    std::vector<util::Expected<Response>> results;
    std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
    if (!multi ||
        curl_multi_setopt(multi.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX) != CURLM_OK) {
        for (std::size_t i = 0; i < transfers.size(); ++i) {
            results.emplace_back(util::fail(util::ErrorCode::internal,
                                            "cannot make a libcurl multi handle for " +
                                                std::string(method_name(transfers[i]->method)) +
                                                " " + transfers[i]->path));
        }
        return results;
    }
    std::vector<std::optional<util::Error>> not_started(transfers.size());
    for (std::size_t i = 0; i < transfers.size(); ++i) {
        CURL* easy = transfers[i]->easy.get();
        // PIPEWAIT: the later transfers wait for the first one's connection to say whether it
        // multiplexes, rather than each opening a connection (and a TLS handshake) of its own.
        auto set = set_bound_and_cache(*transfers[i]);
        if (set) {
            set = set_curl_option(easy, CURLOPT_PIPEWAIT, 1L, "CURLOPT_PIPEWAIT");
        }
        if (set && curl_multi_add_handle(multi.get(), easy) != CURLM_OK) {
            set = util::fail(util::ErrorCode::internal, "cannot add a transfer to a libcurl multi");
        }
        if (!set) {
            not_started[i] = std::move(set).error();
        }
    }
    const auto started = std::chrono::steady_clock::now();
    int running = 0;
    do {
        if (curl_multi_perform(multi.get(), &running) != CURLM_OK ||
            (running > 0 && curl_multi_poll(multi.get(), nullptr, 0, 1000, nullptr) != CURLM_OK)) {
            break; // every transfer not reported done below fails as cut short
        }
    } while (running > 0);
    std::vector<std::optional<CURLcode>> outcome(transfers.size()); // empty: never reported done
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &left)) {
        if (message->msg != CURLMSG_DONE) {
            continue;
        }
        for (std::size_t i = 0; i < transfers.size(); ++i) {
            if (transfers[i]->easy.get() == message->easy_handle) {
                outcome[i] = message->data.result;
            }
        }
    }
    for (std::size_t i = 0; i < transfers.size(); ++i) {
        if (not_started[i]) {
            results.emplace_back(std::unexpected(std::move(*not_started[i])));
            continue;
        }
        curl_multi_remove_handle(multi.get(), transfers[i]->easy.get());
        if (!outcome[i]) {
            results.emplace_back(util::fail(util::ErrorCode::network,
                                            std::string(method_name(transfers[i]->method)) + " " +
                                                transfers[i]->path +
                                                ": libcurl stopped before the request ended"));
            continue;
        }
        results.push_back(finished(*transfers[i], *outcome[i], started));
    }
    return results;
}

} // namespace shimkeeper::kubeapi
