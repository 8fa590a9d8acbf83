#include "shimkeeper/kubeapi/curl_event_loop.hpp"

#include <sys/epoll.h>

namespace shimkeeper::kubeapi {

namespace {

util::Expected<void> sd_check(int rc, const std::string& what) {
    if (rc < 0) {
        return std::unexpected(util::Error::from_errno(util::ErrorCode::internal, what, -rc));
    }
    return {};
}

util::Expected<void> multi_check(CURLMcode rc, const char* what) {
    if (rc != CURLM_OK) {
        return util::fail(util::ErrorCode::internal,
                          std::string(what) + ": " + curl_multi_strerror(rc));
    }
    return {};
}

} // namespace

util::Expected<std::unique_ptr<CurlEventLoop>> CurlEventLoop::create(sd_event* event) {
    std::unique_ptr<CurlEventLoop> loop(new CurlEventLoop());
    if (event != nullptr) {
        loop->m_event.reset(sd_event_ref(event));
    } else {
        sd_event* own = nullptr;
        TRY(sd_check(sd_event_new(&own), "cannot create an sd-event loop"));
        loop->m_event.reset(own);
    }
    (void)TRY(util::make_curl_easy()); // curl_global_init before the first multi handle
    loop->m_multi.reset(curl_multi_init());
    if (!loop->m_multi) {
        return util::fail(util::ErrorCode::internal, "cannot create a libcurl multi handle");
    }
    CURLM* multi = loop->m_multi.get();
    TRY(multi_check(curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket),
                    "CURLMOPT_SOCKETFUNCTION"));
    TRY(multi_check(curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, loop.get()),
                    "CURLMOPT_SOCKETDATA"));
    TRY(multi_check(curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer),
                    "CURLMOPT_TIMERFUNCTION"));
    TRY(multi_check(curl_multi_setopt(multi, CURLMOPT_TIMERDATA, loop.get()),
                    "CURLMOPT_TIMERDATA"));
    return loop;
}

CurlEventLoop::~CurlEventLoop() {
    for (auto& [transfer, running] : m_running) {
        curl_multi_remove_handle(m_multi.get(), transfer->easy.get());
    }
    m_running.clear();
    m_multi.reset(); // may still call on_socket(REMOVE): m_sockets is alive until after this body
}

util::Expected<void> CurlEventLoop::run_once(std::chrono::milliseconds timeout) {
    TRY(sd_check(sd_event_run(m_event.get(), static_cast<uint64_t>(timeout.count()) * 1000),
                 "running the sd-event loop"));
    return {};
}

util::Expected<void> CurlEventLoop::dispatch_pending() {
    // sd_event_run(0) prepares (arming timers), checks without waiting, dispatches at most one
    // source: repeat until a round finds nothing, which leaves the timers armed.
    for (int round = 0; round < 1000; ++round) {
        int rc = sd_event_run(m_event.get(), 0);
        TRY(sd_check(rc, "running the sd-event loop"));
        if (rc == 0) {
            return {};
        }
    }
    return {}; // a storm of ready sources: the fd stays readable, the caller comes back
}

util::Expected<void> CurlEventLoop::start(std::unique_ptr<Transfer> transfer, Done done) {
    Transfer* key = transfer.get();
    TRY(multi_check(curl_multi_add_handle(m_multi.get(), key->easy.get()),
                    "adding a transfer to the multi handle"));
    m_running.emplace(key, Running{std::move(transfer), std::move(done)});
    return {};
}

void CurlEventLoop::cancel(Transfer* transfer) {
    auto found = m_running.find(transfer);
    if (found == m_running.end()) {
        return;
    }
    curl_multi_remove_handle(m_multi.get(), transfer->easy.get());
    m_running.erase(found);
}

util::Expected<SdSource> CurlEventLoop::after(std::chrono::milliseconds delay,
                                              std::function<void()> fire) {
    // The closure lives as the source's userdata and dies with the source (its destroy
    // callback), however the source ends: fired, or dropped by its owner first.
    auto closure = std::make_unique<std::function<void()>>(std::move(fire));
    auto callback = [](sd_event_source*, uint64_t, void* user) -> int {
        (*static_cast<std::function<void()>*>(user))();
        return 0;
    };
    sd_event_source* raw = nullptr;
    TRY(sd_check(sd_event_add_time_relative(m_event.get(), &raw, CLOCK_MONOTONIC,
                                            static_cast<uint64_t>(delay.count()) * 1000, 1000,
                                            callback, closure.get()),
                 "adding a timer"));
    SdSource source(raw);
    TRY(sd_check(sd_event_source_set_destroy_callback(
                     raw, [](void* user) { delete static_cast<std::function<void()>*>(user); }),
                 "setting a timer's destroy callback"));
    (void)closure.release(); // owned by the source now
    return source;
}

util::Expected<SdSource> CurlEventLoop::after_reading_ready_data(std::chrono::milliseconds delay,
                                                                 std::function<void()> fire) {
    SdSource source = TRY(after(delay, std::move(fire)));
    // sd-event dispatches the pending source of the lowest priority value first: the sockets'
    // (normal), then this timer.
    TRY(sd_check(sd_event_source_set_priority(source.get(), SD_EVENT_PRIORITY_NORMAL + 1),
                 "setting a timer's priority"));
    return source;
}

int CurlEventLoop::on_socket(CURL*, curl_socket_t fd, int what, void* user, void*) {
    auto& self = *static_cast<CurlEventLoop*>(user);
    if (what == CURL_POLL_REMOVE) {
        self.m_sockets.erase(fd);
        return 0;
    }
    uint32_t events =
        ((what & CURL_POLL_IN) != 0 ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) != 0 ? EPOLLOUT : 0u);
    if (auto found = self.m_sockets.find(fd); found != self.m_sockets.end()) {
        return sd_event_source_set_io_events(found->second.get(), events) < 0 ? -1 : 0;
    }
    sd_event_source* raw = nullptr;
    if (sd_event_add_io(self.m_event.get(), &raw, fd, events, on_io, &self) < 0) {
        return -1;
    }
    self.m_sockets.emplace(fd, SdSource(raw));
    return 0;
}

int CurlEventLoop::on_timer(CURLM*, long timeout_ms, void* user) {
    auto& self = *static_cast<CurlEventLoop*>(user);
    if (timeout_ms < 0) {
        if (self.m_timer) {
            sd_event_source_set_enabled(self.m_timer.get(), SD_EVENT_OFF);
        }
        return 0;
    }
    uint64_t now = 0;
    sd_event_now(self.m_event.get(), CLOCK_MONOTONIC, &now);
    uint64_t when = now + static_cast<uint64_t>(timeout_ms) * 1000;
    if (!self.m_timer) {
        sd_event_source* raw = nullptr;
        if (sd_event_add_time(self.m_event.get(), &raw, CLOCK_MONOTONIC, when, 1000, on_timeout,
                              &self) < 0) {
            return -1;
        }
        self.m_timer.reset(raw);
        return 0;
    }
    sd_event_source_set_time(self.m_timer.get(), when);
    sd_event_source_set_enabled(self.m_timer.get(), SD_EVENT_ONESHOT);
    return 0;
}

int CurlEventLoop::on_io(sd_event_source*, int fd, uint32_t revents, void* user) {
    int flags = ((revents & EPOLLIN) != 0 ? CURL_CSELECT_IN : 0) |
                ((revents & EPOLLOUT) != 0 ? CURL_CSELECT_OUT : 0) |
                ((revents & (EPOLLERR | EPOLLHUP)) != 0 ? CURL_CSELECT_ERR : 0);
    static_cast<CurlEventLoop*>(user)->act(fd, flags);
    return 0;
}

int CurlEventLoop::on_timeout(sd_event_source*, uint64_t, void* user) {
    static_cast<CurlEventLoop*>(user)->act(CURL_SOCKET_TIMEOUT, 0);
    return 0;
}

void CurlEventLoop::act(curl_socket_t fd, int flags) {
    int running = 0;
    curl_multi_socket_action(m_multi.get(), fd, flags, &running);
    finish_done();
}

void CurlEventLoop::finish_done() {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(m_multi.get(), &left)) {
        if (message->msg != CURLMSG_DONE) {
            continue;
        }
        CURLcode rc = message->data.result;
        char* key = nullptr;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &key);
        auto found = m_running.find(reinterpret_cast<Transfer*>(key));
        if (found == m_running.end()) {
            continue;
        }
        curl_multi_remove_handle(m_multi.get(), message->easy_handle);
        Running done = std::move(found->second);
        m_running.erase(found);
        done.done(std::move(done.transfer), rc); // may start new transfers
    }
}

} // namespace shimkeeper::kubeapi
