#include "shimkeeper/kubeapi/watch.hpp"

#include <random>

namespace shimkeeper::kubeapi {

Watch::Watch(Connection& connection, CurlEventLoop& loop, Resource resource, std::string ns,
             WatchSettings settings, Handler handler)
    : m_connection(connection), m_loop(loop), m_resource(std::move(resource)),
      m_namespace(std::move(ns)), m_handler(std::move(handler)),
      m_stream_timeout_s(2 * settings.min_timeout.count() + 30),
      m_own_connection(settings.own_connection), m_header_wait(settings.header_wait),
      m_state(std::move(settings), std::random_device{}()) {}

Watch::~Watch() {
    if (m_current != nullptr) {
        m_loop.cancel(m_current);
    }
}

util::Expected<void> Watch::start() {
    TRY(collection_path(m_resource, m_namespace)); // refuse a bad resource now, not in a retry
    schedule();
    return {};
}

void Watch::schedule() {
    auto delay = m_state.delay();
    // Even "at once" goes through the timer: the caller may be deep in a libcurl callback.
    auto timer = m_loop.after(delay, [this] { launch(); });
    if (!timer) {
        m_stopped = std::move(timer).error();
        return;
    }
    m_retry_timer = std::move(*timer);
}

void Watch::launch() {
    // m_retry_timer is the source running this very callback: sd-event keeps it alive until
    // the callback returns, and replacing it later is safe.
    std::string path = collection_path(m_resource, m_namespace).value() + m_state.next_query();
    auto transfer = m_connection.prepare(Method::get, path);
    if (!transfer) {
        m_state.on_transport_error(transfer.error().message()); // e.g. the tokenFile is gone
        schedule();
        return;
    }
    if (m_own_connection) {
        // Not multiplexed with the other watches: a transfer removed mid-stream closes it.
        // Fresh, and closed when the transfer ends: left in the multi handle's cache, libcurl
        // would hand this HTTP/1.1 connection to the next watch, which wants HTTP/2 and would
        // then share this one's fate (README, Rolling rollouts).
        CURL* easy = (*transfer)->easy.get();
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_1_1});
        curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
    }
    if (m_fresh_connection_next) {
        curl_easy_setopt((*transfer)->easy.get(), CURLOPT_FRESH_CONNECT, 1L);
        m_fresh_connection_next = false;
    }
    bool streaming = m_state.streams();
    if (streaming) {
        (*transfer)->on_data = [this](std::string_view data) {
            return on_data(data);
        };
        // The server ends the stream at timeoutSeconds; this only catches a silent peer.
        curl_easy_setopt((*transfer)->easy.get(), CURLOPT_TIMEOUT, m_stream_timeout_s);
    } else {
        curl_easy_setopt((*transfer)->easy.get(), CURLOPT_TIMEOUT, 60L);
    }
    m_partial_line.clear();
    m_had_lines = false;
    m_restart = false;
    m_started = std::chrono::steady_clock::now();
    m_current = transfer->get();
    auto started =
        m_loop.start(std::move(*transfer), [this](std::unique_ptr<Transfer> done, CURLcode rc) {
            on_done(std::move(done), rc);
        });
    if (!started) {
        m_current = nullptr;
        m_stopped = std::move(started).error();
        return;
    }
    if (!streaming) {
        return; // a list page is bounded whole (above)
    }
    auto header_timer = m_loop.after(m_header_wait, [this] { abandon_if_unanswered(); });
    if (!header_timer) {
        m_loop.cancel(m_current);
        m_current = nullptr;
        m_stopped = std::move(header_timer).error();
        return;
    }
    m_header_timer = std::move(*header_timer);
}

void Watch::abandon_if_unanswered() {
    if (m_current == nullptr || m_current->http_code() != 0) {
        return; // answered: the stream's own timeout bounds the rest
    }
    // m_header_timer is the source running this callback; sd-event keeps it alive until it returns.
    m_loop.cancel(m_current); // the loop owns the transfer: this ends and frees it
    m_current = nullptr;
    m_fresh_connection_next = true;
    m_state.on_transport_error("no response to the request within " +
                               std::to_string(m_header_wait.count()) +
                               " ms (the connection is not reused)");
    schedule();
}

bool Watch::on_data(std::string_view data) {
    m_partial_line.append(data);
    std::size_t start = 0;
    for (std::size_t end; (end = m_partial_line.find('\n', start)) != std::string::npos;
         start = end + 1) {
        std::string_view line(m_partial_line.data() + start, end - start);
        if (line.empty()) {
            continue;
        }
        m_had_lines = true;
        auto outcome = m_state.on_watch_line(line);
        if (outcome.event) {
            m_handler(*outcome.event);
        }
        if (outcome.restart) {
            m_restart = true;
            return false; // aborts this transfer; on_done schedules what the state decided
        }
    }
    m_partial_line.erase(0, start);
    return true;
}

void Watch::on_done(std::unique_ptr<Transfer> transfer, CURLcode rc) {
    m_current = nullptr;
    m_header_timer = {};
    long code = transfer->http_code();
    auto lasted = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - m_started);
    if (m_restart) {
        // decided by the line that stopped the stream
    } else if (rc != CURLE_OK) {
        m_state.on_transport_error(transfer->failure(rc));
    } else if (code != 200) {
        m_state.on_http_error(parse_status(code, transfer->response_body));
    } else if (m_state.phase() == WatchState::Phase::list) {
        if (auto synced = m_state.on_list_page(transfer->response_body)) {
            m_handler(*synced);
        }
    } else {
        m_state.on_stream_end(lasted, m_had_lines);
    }
    schedule();
}

} // namespace shimkeeper::kubeapi
