// The curl/sd-event loop embedded in another loop through its fd, as the daemon's ChangeSource
// will do: the fd turns readable when a timer of the inner loop is due, and dispatch_pending()
// runs it. No server needed: timers are what a watch's retry and libcurl's timeouts use.
#include "shimkeeper/kubeapi/curl_event_loop.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <string>
#include <sys/epoll.h>
#include <systemd/sd-event.h>
#include <unistd.h>
#include <vector>

namespace {
namespace kubeapi_event_loop {

using shimkeeper::kubeapi::CurlEventLoop;
using namespace std::chrono_literals;

bool readable_within(int fd, int timeout_ms) {
    pollfd entry{fd, POLLIN, 0};
    return ::poll(&entry, 1, timeout_ms) == 1 && (entry.revents & POLLIN) != 0;
}

TEST(KubeEventLoop, FdTurnsReadableForADueTimer) {
    auto loop = CurlEventLoop::create();
    ASSERT_TRUE(loop) << loop.error().message();
    int fired = 0;
    auto timer = (*loop)->after(30ms, [&] { ++fired; });
    ASSERT_TRUE(timer) << timer.error().message();
    ASSERT_TRUE((*loop)->dispatch_pending()); // arms the timer
    EXPECT_EQ(fired, 0);
    ASSERT_TRUE(readable_within((*loop)->fd(), 5000));
    ASSERT_TRUE((*loop)->dispatch_pending());
    EXPECT_EQ(fired, 1);
    EXPECT_FALSE(readable_within((*loop)->fd(), 50)); // nothing left: no busy wake-ups
}

TEST(KubeEventLoop, ADroppedTimerNeverFires) {
    auto loop = CurlEventLoop::create();
    ASSERT_TRUE(loop);
    int fired = 0;
    {
        auto timer = (*loop)->after(10ms, [&] { ++fired; });
        ASSERT_TRUE(timer);
    }
    ASSERT_TRUE((*loop)->dispatch_pending());
    EXPECT_FALSE(readable_within((*loop)->fd(), 100));
    ASSERT_TRUE((*loop)->run_once(50ms));
    EXPECT_EQ(fired, 0);
}

TEST(KubeEventLoop, ATimerMayScheduleTheNext) {
    auto loop = CurlEventLoop::create();
    ASSERT_TRUE(loop);
    int fired = 0;
    shimkeeper::kubeapi::SdSource second;
    auto first = (*loop)->after(5ms, [&] {
        ++fired;
        second = (*loop)->after(5ms, [&] { ++fired; }).value();
    });
    ASSERT_TRUE(first);
    for (int i = 0; i < 100 && fired < 2; ++i) {
        ASSERT_TRUE((*loop)->run_once(100ms));
    }
    EXPECT_EQ(fired, 2);
}

// The coordinator's grant step decides on what its watches have read. Armed before a pass whose
// blocking writes held the loop while watch events came (a pipe written by a timer stands in for
// the socket and the pass), it runs after that data was read, not before as an older pending
// source would.
TEST(KubeEventLoop, ATimerAfterReadyDataFiresAfterDataThatCameMeanwhile) {
    auto loop = CurlEventLoop::create();
    ASSERT_TRUE(loop);
    std::vector<std::string> order;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    auto pass = (*loop)->after(0ms, [&] {
        order.push_back("pass");
        ASSERT_EQ(::write(fds[1], "e", 1), 1); // an event arrives while the pass runs
    });
    ASSERT_TRUE(pass);
    auto decide = (*loop)->after_reading_ready_data(0ms, [&] { order.push_back("decided"); });
    ASSERT_TRUE(decide) << decide.error().message();
    sd_event_source* io = nullptr;
    ASSERT_GE(sd_event_add_io((*loop)->event(), &io, fds[0], EPOLLIN,
                              [](sd_event_source* source, int fd, uint32_t, void* user) -> int {
                                  char byte = 0;
                                  EXPECT_EQ(::read(fd, &byte, 1), 1);
                                  static_cast<std::vector<std::string>*>(user)->push_back("read");
                                  return sd_event_source_set_enabled(source, SD_EVENT_OFF);
                              },
                              &order),
              0);
    shimkeeper::kubeapi::SdSource io_source(io);
    for (int i = 0; i < 10 && order.size() < 3; ++i) {
        ASSERT_TRUE((*loop)->run_once(100ms));
    }
    EXPECT_EQ(order, (std::vector<std::string>{"pass", "read", "decided"}));
    ::close(fds[0]);
    ::close(fds[1]);
}

} // namespace kubeapi_event_loop
} // namespace
