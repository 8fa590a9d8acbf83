// libcurl's multi interface driven by an sd-event loop: curl tells us which sockets to wait on
// (CURLMOPT_SOCKETFUNCTION) and when to call it back (CURLMOPT_TIMERFUNCTION); we turn those
// into sd-event io and time sources and hand readiness back with curl_multi_socket_action. Many
// watches share one loop and one thread; nothing polls.
//
// Plugging into the daemon: give it the daemon's sd_event, or let it own one and register
// fd() as a daemon ChangeSource whose callback calls dispatch_pending(). An sd_event's own fd
// (its epoll fd; its timers are timerfds inside it) is readable whenever one of its sources is
// ready, provided its timers were armed, which only sd_event_prepare does: dispatch_pending()
// ends with that, so call it once after creating the loop and after every readable fd.
#pragma once

#include "shimkeeper/kubeapi/connection.hpp"
#include "shimkeeper/kubeapi/sd_event_source.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>

namespace shimkeeper::kubeapi {

struct CurlMultiDeleter {
    void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};

class CurlEventLoop {
public:
    // The transfer comes back to its owner when it ends, with libcurl's result.
    using Done = std::function<void(std::unique_ptr<Transfer>, CURLcode)>;

    // event == nullptr: a loop of its own.
    static util::Expected<std::unique_ptr<CurlEventLoop>> create(sd_event* event = nullptr);
    ~CurlEventLoop();
    CurlEventLoop(const CurlEventLoop&) = delete;
    CurlEventLoop& operator=(const CurlEventLoop&) = delete;

    sd_event* event() const { return m_event.get(); }
    int fd() const { return sd_event_get_fd(m_event.get()); }
    // One loop iteration, waiting at most `timeout`.
    util::Expected<void> run_once(std::chrono::milliseconds timeout);
    // Everything ready now, without waiting, then the timers armed for the next poll of fd().
    util::Expected<void> dispatch_pending();

    util::Expected<void> start(std::unique_ptr<Transfer> transfer, Done done);
    // Ends a running transfer without calling its Done. Not from inside that transfer's
    // on_data (return false there instead).
    void cancel(Transfer* transfer);

    // A one-shot timer on the same loop; dropping the returned source cancels it.
    util::Expected<SdSource> after(std::chrono::milliseconds delay, std::function<void()> fire);
    // The same, but when it is due while sockets have data to read (a blocking request held the
    // loop, and watch events came meanwhile), it fires only after they were read: a decision it
    // makes sees every event that had arrived by then.
    util::Expected<SdSource> after_reading_ready_data(std::chrono::milliseconds delay,
                                                      std::function<void()> fire);

private:
    CurlEventLoop() = default;

    static int on_socket(CURL* easy, curl_socket_t fd, int what, void* user, void* socket_data);
    static int on_timer(CURLM* multi, long timeout_ms, void* user);
    static int on_io(sd_event_source* source, int fd, uint32_t revents, void* user);
    static int on_timeout(sd_event_source* source, uint64_t usec, void* user);
    void act(curl_socket_t fd, int flags);
    void finish_done();

    struct Running {
        std::unique_ptr<Transfer> transfer;
        Done done;
    };

    SdEventRef m_event;
    std::unique_ptr<CURLM, CurlMultiDeleter> m_multi;
    SdSource m_timer;
    std::map<curl_socket_t, SdSource> m_sockets;
    std::map<Transfer*, Running> m_running;
};

} // namespace shimkeeper::kubeapi
