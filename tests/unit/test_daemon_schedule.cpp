#include "shimkeeper/daemon/schedule.hpp"

#include <gtest/gtest.h>

namespace {
namespace daemon_schedule {

using namespace std::chrono_literals;
using shimkeeper::daemon::Instant;
using shimkeeper::daemon::Schedule;
using shimkeeper::daemon::SchedulePolicy;
using shimkeeper::daemon::Trigger;

constexpr SchedulePolicy k_policy{500ms, 5s, 5s, 300s};

Instant at(std::chrono::milliseconds since_boot) {
    return since_boot;
}

Schedule converged_at(std::chrono::milliseconds when) {
    Schedule schedule(k_policy);
    schedule.on_outcome(true, at(when), 300s);
    return schedule;
}

TEST(DaemonSchedule, StartsWithAnImmediateStartupAttempt) {
    Schedule schedule(k_policy);
    EXPECT_EQ(schedule.next().why, Trigger::startup);
    EXPECT_EQ(schedule.next().at, at(0ms));
}

TEST(DaemonSchedule, ConvergedWaitsForTheDriftCheck) {
    Schedule schedule = converged_at(10s);
    EXPECT_EQ(schedule.next().why, Trigger::drift);
    EXPECT_EQ(schedule.next().at, at(310s));
    EXPECT_FALSE(schedule.retry_at().has_value());
}

TEST(DaemonSchedule, AChangeReconcilesAfterTheQuietPeriod) {
    Schedule schedule = converged_at(10s);
    schedule.on_change(at(20s));
    EXPECT_EQ(schedule.next().why, Trigger::change);
    EXPECT_EQ(schedule.next().at, at(20'500ms));
}

TEST(DaemonSchedule, ABurstOfChangesIsReadOnceAfterTheLastOne) {
    Schedule schedule = converged_at(10s);
    schedule.on_change(at(20'000ms));
    schedule.on_change(at(20'100ms));
    schedule.on_change(at(20'400ms));
    EXPECT_EQ(schedule.next().at, at(20'900ms));
}

TEST(DaemonSchedule, ChangesThatNeverPauseAreStillReadAfterTheCap) {
    Schedule schedule = converged_at(10s);
    for (auto t = 20'000ms; t < 40'000ms; t += 100ms) {
        schedule.on_change(at(t));
    }
    EXPECT_EQ(schedule.next().at, at(25s)); // first change + max_debounce
}

TEST(DaemonSchedule, AnAttemptConsumesThePendingChange) {
    Schedule schedule = converged_at(10s);
    schedule.on_change(at(20s));
    schedule.on_outcome(true, at(21s), 300s);
    EXPECT_FALSE(schedule.change_pending());
    EXPECT_EQ(schedule.next().why, Trigger::drift);
    EXPECT_EQ(schedule.next().at, at(321s));
}

TEST(DaemonSchedule, FailuresRetryWithExponentialBackoff) {
    Schedule schedule(k_policy);
    Instant now = at(0ms);
    std::vector<Instant> retries;
    for (int i = 0; i < 9; ++i) {
        schedule.on_outcome(false, now, 300s);
        ASSERT_EQ(schedule.next().why, Trigger::retry);
        retries.push_back(schedule.next().at - now);
        now = schedule.next().at + 2s; // the attempt itself took 2 s
    }
    std::vector<Instant> expected{5s, 10s, 20s, 40s, 80s, 160s, 300s, 300s, 300s};
    EXPECT_EQ(retries, expected);
    EXPECT_EQ(schedule.consecutive_failures(), 9u);
}

TEST(DaemonSchedule, AChangeWhileFailingWaitsForTheBackoff) {
    // The restart-storm guard: an operator (or a tool) rewriting a broken file every second
    // must not make the daemon restart containerd every second.
    Schedule schedule(k_policy);
    schedule.on_outcome(false, at(0ms), 300s);
    schedule.on_outcome(false, at(6s), 300s); // second failure: next try at 16 s
    schedule.on_change(at(7s));
    EXPECT_EQ(schedule.next().why, Trigger::change);
    EXPECT_EQ(schedule.next().at, at(16s));
}

TEST(DaemonSchedule, AChangeNearTheRetryIsStillDebounced) {
    Schedule schedule(k_policy);
    schedule.on_outcome(false, at(0ms), 300s); // retry at 5 s
    schedule.on_change(at(4'800ms));
    EXPECT_EQ(schedule.next().at, at(5'300ms));
}

TEST(DaemonSchedule, SuccessResetsTheBackoff) {
    Schedule schedule(k_policy);
    schedule.on_outcome(false, at(0ms), 300s);
    schedule.on_outcome(false, at(6s), 300s);
    schedule.on_outcome(true, at(17s), 300s);
    EXPECT_EQ(schedule.consecutive_failures(), 0u);
    EXPECT_FALSE(schedule.retry_at().has_value());
    schedule.on_outcome(false, at(400s), 300s);
    EXPECT_EQ(schedule.retry_at(), at(405s)); // back to the initial delay
    schedule.on_change(at(401s));
    EXPECT_EQ(schedule.next().at, at(405s));
}

TEST(DaemonSchedule, AChangeAfterSuccessIsNotHeldBack) {
    Schedule schedule = converged_at(10s);
    schedule.on_change(at(10'001ms));
    EXPECT_EQ(schedule.next().at, at(10'501ms));
}

TEST(DaemonSchedule, AChangeWithItsOwnDebounceWaitsOnlyThatLong) {
    Schedule schedule = converged_at(10s);
    schedule.on_change(at(20s), false, 100ms); // a cluster watch's event
    EXPECT_EQ(schedule.next().at, at(20'100ms));
    schedule.on_change(at(20'050ms), false, 100ms); // the same apply's next document
    EXPECT_EQ(schedule.next().at, at(20'150ms));
}

TEST(DaemonSchedule, AFileChangeKeepsItsLongerDebounceBesideAShortOne) {
    Schedule schedule = converged_at(10s);
    schedule.on_change(at(20s));                    // a file: 500 ms
    schedule.on_change(at(20'100ms), false, 100ms); // then a cluster event: not earlier than that
    EXPECT_EQ(schedule.next().at, at(20'500ms));
    schedule.on_outcome(true, at(21s), 300s);
    schedule.on_change(at(30s), false, 100ms); // the file's quiet time is over with its attempt
    EXPECT_EQ(schedule.next().at, at(30'100ms));
}

} // namespace daemon_schedule
} // namespace
