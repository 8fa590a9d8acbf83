#include "shimkeeper/daemon/backoff.hpp"

#include <gtest/gtest.h>

namespace {
namespace daemon_backoff {

using namespace std::chrono_literals;
using shimkeeper::daemon::backoff_delay;
using shimkeeper::daemon::Jitter;
using shimkeeper::daemon::jittered;

TEST(DaemonBackoff, DoublesFromTheInitialDelayUpToTheCap) {
    EXPECT_EQ(backoff_delay(1, 5s, 300s), 5s);
    EXPECT_EQ(backoff_delay(2, 5s, 300s), 10s);
    EXPECT_EQ(backoff_delay(3, 5s, 300s), 20s);
    EXPECT_EQ(backoff_delay(4, 5s, 300s), 40s);
    EXPECT_EQ(backoff_delay(6, 5s, 300s), 160s);
    EXPECT_EQ(backoff_delay(7, 5s, 300s), 300s); // 320 s capped
    EXPECT_EQ(backoff_delay(8, 5s, 300s), 300s);
}

TEST(DaemonBackoff, StaysCappedAfterAnyNumberOfFailures) {
    EXPECT_EQ(backoff_delay(64, 5s, 300s), 300s);
    EXPECT_EQ(backoff_delay(1'000'000, 5s, 300s), 300s);
    EXPECT_EQ(backoff_delay(~0u, 1ms, 300s), 300s);
}

TEST(DaemonBackoff, NoFailureMeansNoWait) {
    EXPECT_EQ(backoff_delay(0, 5s, 300s), 0ms);
}

TEST(DaemonBackoff, AnInitialDelayAboveTheCapIsCapped) {
    EXPECT_EQ(backoff_delay(1, 10min, 300s), 300s);
}

TEST(DaemonBackoff, NeverShrinksAsFailuresGrow) {
    auto previous = backoff_delay(1, 3s, 7min);
    for (unsigned n = 2; n < 40; ++n) {
        auto next = backoff_delay(n, 3s, 7min);
        EXPECT_GE(next, previous) << "after " << n << " failures";
        previous = next;
    }
}

TEST(DaemonJitter, SpansPlusMinusTheSpreadAroundTheBase) {
    EXPECT_EQ(jittered(300s, 0.2, 0.0), 240s);
    EXPECT_EQ(jittered(300s, 0.2, 0.5), 300s);
    EXPECT_EQ(jittered(300s, 0.2, 1.0), 360s);
}

TEST(DaemonJitter, ClampsOutOfRangeInputs) {
    EXPECT_EQ(jittered(100s, 0.2, -3.0), 80s);
    EXPECT_EQ(jittered(100s, 0.2, 7.0), 120s);
    EXPECT_EQ(jittered(100s, 5.0, 0.0), 0s); // spread clamped to 100 %: never negative
    EXPECT_EQ(jittered(100s, -1.0, 1.0), 100s);
}

TEST(DaemonJitter, DrawsStayWithinBoundsAndActuallySpread) {
    Jitter jitter(12345);
    std::chrono::milliseconds low = 1h;
    std::chrono::milliseconds high = 0ms;
    for (int i = 0; i < 10'000; ++i) {
        auto delay = jitter.apply(300s, Jitter::k_drift_spread);
        ASSERT_GE(delay, 240s);
        ASSERT_LE(delay, 360s);
        low = std::min(low, delay);
        high = std::max(high, delay);
    }
    // Nodes started together must drift apart: the draws cover most of the +-20 % band.
    EXPECT_LT(low, 250s);
    EXPECT_GT(high, 350s);
}

TEST(DaemonJitter, DifferentSeedsGiveDifferentSchedules) {
    Jitter a(1);
    Jitter b(2);
    int same = 0;
    for (int i = 0; i < 100; ++i) {
        same += a.apply(300s, 0.2) == b.apply(300s, 0.2) ? 1 : 0;
    }
    EXPECT_LT(same, 10);
}

} // namespace daemon_backoff
} // namespace
