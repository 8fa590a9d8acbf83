// Polling for health with a fake containerd and a fake clock: the backoff sequence, the deadline,
// and the last reason when time runs out. No real waiting happens here.
#include "shimkeeper/health/wait_healthy.hpp"

#include <gtest/gtest.h>

namespace {
namespace health_wait_healthy {

using namespace shimkeeper;
using namespace shimkeeper::health;
using std::chrono::milliseconds;

// containerd that comes up after `down_calls` Version calls, with the handler registered
// after `cri_late` more Status calls. Records the per-call timeouts it was given.
class FakeContainerd final : public ContainerdClient {
public:
    int down_calls = 0;
    int cri_late = 0;
    std::vector<milliseconds> timeouts;
    int version_calls = 0;

    util::Expected<std::vector<PodSandboxInfo>> pod_sandboxes(std::chrono::milliseconds) override {
        return std::vector<PodSandboxInfo>{};
    }
    util::Expected<std::string> version(milliseconds timeout) override {
        timeouts.push_back(timeout);
        if (version_calls++ < down_calls) {
            return util::fail(util::ErrorCode::network, "connection refused");
        }
        return std::string("1.6.20~ds1");
    }
    util::Expected<CriStatus> cri_status(milliseconds timeout) override {
        timeouts.push_back(timeout);
        CriStatus status;
        status.runtime_ready = true;
        status.conditions = {{"RuntimeReady", true}};
        status.handlers = {{"runc", "io.containerd.runc.v2", ""}};
        if (cri_late-- <= 0) {
            status.handlers.push_back({"spin", "/bin/spin", ""});
        }
        return status;
    }
};

struct FakeTime {
    std::chrono::steady_clock::time_point now{};
    std::vector<milliseconds> sleeps;
    Pacer pacer() {
        return {[this] { return now; },
                [this](milliseconds delay) {
                    sleeps.push_back(delay);
                    now += delay;
                }};
    }
};

HealthExpectation spin_expected() {
    HealthExpectation expected;
    expected.handlers = {{"spin", "/bin/spin"}};
    expected.must_keep = {"runc"};
    return expected;
}

TEST(WaitHealthy, HealthyAtOnceDoesNotSleep) {
    FakeContainerd containerd;
    FakeTime time;
    const HealthReport report =
        wait_healthy(containerd, spin_expected(), milliseconds{30'000}, time.pacer());
    EXPECT_TRUE(report.healthy) << report.reason;
    EXPECT_TRUE(time.sleeps.empty());
}

TEST(WaitHealthy, BacksOffDoublingUpToTheCapUntilHealthy) {
    FakeContainerd containerd;
    containerd.down_calls = 6;
    containerd.cri_late = 1;
    FakeTime time;
    const HealthReport report =
        wait_healthy(containerd, spin_expected(), milliseconds{30'000}, time.pacer(),
                     Backoff{milliseconds{50}, milliseconds{400}, milliseconds{5000}});
    EXPECT_TRUE(report.healthy) << report.reason;
    const std::vector<milliseconds> expected = {
        milliseconds{50},  milliseconds{100}, milliseconds{200}, milliseconds{400},
        milliseconds{400}, milliseconds{400}, milliseconds{400}};
    EXPECT_EQ(time.sleeps, expected);
    EXPECT_EQ(containerd.version_calls, 8);
}

TEST(WaitHealthy, GivesUpAtTheDeadlineWithTheLastReason) {
    FakeContainerd containerd;
    containerd.down_calls = 1'000'000;
    FakeTime time;
    const auto start = time.now;
    const HealthReport report =
        wait_healthy(containerd, spin_expected(), milliseconds{2'000}, time.pacer());
    EXPECT_FALSE(report.healthy);
    // The last attempt starts early enough to get min_call (200 ms) before the deadline.
    EXPECT_LE(time.now - start, milliseconds{1'800});
    EXPECT_GT(time.now - start, milliseconds{1'000});
    EXPECT_NE(report.reason.find("containerd does not answer Version: connection refused"),
              std::string::npos);
    EXPECT_NE(report.reason.find("in 2000 ms"), std::string::npos);
}

TEST(WaitHealthy, NoCallWaitsBeyondTheDeadlineOrTheCallCap) {
    FakeContainerd containerd;
    containerd.down_calls = 1'000'000;
    FakeTime time;
    wait_healthy(containerd, spin_expected(), milliseconds{12'000}, time.pacer());
    ASSERT_FALSE(containerd.timeouts.empty());
    EXPECT_EQ(containerd.timeouts.front(), milliseconds{5'000});
    for (const milliseconds timeout : containerd.timeouts) {
        EXPECT_GE(timeout, milliseconds{200});
        EXPECT_LE(timeout, milliseconds{5'000});
    }
    EXPECT_GE(containerd.timeouts.back(), milliseconds{200}); // min_call: a real chance to answer
    EXPECT_LE(containerd.timeouts.back(), milliseconds{1'000});
}

TEST(WaitHealthy, ReportsTheHandlerThatNeverAppeared) {
    FakeContainerd containerd;
    containerd.cri_late = 1'000'000;
    FakeTime time;
    const HealthReport report =
        wait_healthy(containerd, spin_expected(), milliseconds{1'000}, time.pacer());
    EXPECT_FALSE(report.healthy);
    EXPECT_NE(report.reason.find("runtime handler \"spin\" is not registered"), std::string::npos);
}

} // namespace health_wait_healthy
} // namespace
