// A watch on one kind of object, run by a CurlEventLoop: WatchState decides, this file does the
// I/O. List pages are collected whole; the watch stream is split into lines as it arrives and each
// event is handed over at once. Retries wait on an sd-event timer, never in a loop.
//
// The handler runs inside the event loop (from libcurl's write callback or a transfer's end). It
// may make blocking Client calls (those use their own handles), but must not destroy the Watch.
#pragma once

#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/kubeapi/curl_event_loop.hpp"
#include "shimkeeper/kubeapi/watch_state.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace shimkeeper::kubeapi {

class Watch {
public:
    using Handler = std::function<void(const WatchEvent&)>;

    Watch(Connection& connection, CurlEventLoop& loop, Resource resource, std::string ns,
          WatchSettings settings, Handler handler);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

    util::Expected<void> start();
    const WatchState& state() const { return m_state; }
    // Set when the watch stopped for good: the event loop refused a timer or a transfer.
    const std::optional<util::Error>& stopped() const { return m_stopped; }

private:
    void schedule();
    void launch();
    bool on_data(std::string_view data);
    void on_done(std::unique_ptr<Transfer> transfer, CURLcode rc);
    // header_wait passed since launch(): abandons the request when it has no status line yet.
    void abandon_if_unanswered();

    Connection& m_connection;
    CurlEventLoop& m_loop;
    Resource m_resource;
    std::string m_namespace;
    Handler m_handler;
    long m_stream_timeout_s = 0;
    bool m_own_connection = false;
    std::chrono::milliseconds m_header_wait;
    bool m_fresh_connection_next = false; // the last request got no answer on its connection
    WatchState m_state;

    Transfer* m_current = nullptr;
    SdSource m_retry_timer;
    SdSource m_header_timer; // for m_current: dropped (cancelled) when it ends
    std::optional<util::Error> m_stopped;
    std::string m_partial_line;
    bool m_had_lines = false;
    bool m_restart = false; // a line asked to abandon the stream
    std::chrono::steady_clock::time_point m_started;
};

} // namespace shimkeeper::kubeapi
