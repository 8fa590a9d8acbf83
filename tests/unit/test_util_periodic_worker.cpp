// The renewal threads' worker: rounds on a period or when woken, stop() waits for the round in
// flight and runs no more, and an exception that escapes a round is told and survived.
#include "shimkeeper/util/periodic_worker.hpp"

#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace shimkeeper::util {
namespace {
namespace util_periodic_worker {

using namespace std::chrono_literals;

// What the rounds did, and a way to wait for it.
struct Record {
    std::mutex mutex;
    std::condition_variable changed;
    int rounds = 0;
    std::vector<std::string> exceptions;

    bool wait_for_rounds(int n) {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, 10s, [&] { return rounds >= n; });
    }
    void count() {
        {
            std::lock_guard lock(mutex);
            ++rounds;
        }
        changed.notify_all();
    }
};

TEST(PeriodicWorker, RoundsRunOnThePeriod) {
    Record record;
    PeriodicWorker worker(
        10ms, [&](const std::atomic<bool>&) { record.count(); }, [](const std::string&) {});
    EXPECT_TRUE(record.wait_for_rounds(3));
}

// When each round started and ended.
struct Timeline {
    std::mutex mutex;
    std::vector<
        std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>>
        rounds;
    void add(std::chrono::steady_clock::time_point start) {
        std::lock_guard lock(mutex);
        rounds.emplace_back(start, std::chrono::steady_clock::now());
    }
};

TEST(PeriodicWorker, QuickRoundsStartAPeriodApart) {
    Record record;
    Timeline timeline;
    PeriodicWorker worker(
        200ms,
        [&](const std::atomic<bool>&) {
            timeline.add(std::chrono::steady_clock::now());
            record.count();
        },
        [](const std::string&) {});
    ASSERT_TRUE(record.wait_for_rounds(3));
    worker.stop();
    std::lock_guard lock(timeline.mutex);
    // The round reads the clock after the worker started it: one scheduled late on a loaded
    // machine (ASan, nice 19, beside the scenarios) came 188 ms after the one before. Back-to-back
    // rounds would be a few milliseconds apart.
    for (std::size_t i = 1; i < timeline.rounds.size(); ++i) {
        EXPECT_GE(timeline.rounds[i].first - timeline.rounds[i - 1].first, 150ms) << "round " << i;
    }
}

// A renewal that took longer than the period (a slow API server) is followed at once: waiting a
// whole period more would put the next one past a deadline counted from this one's start.
TEST(PeriodicWorker, ARoundLongerThanThePeriodIsFollowedAtOnce) {
    Record record;
    Timeline timeline;
    PeriodicWorker worker(
        1s,
        [&](const std::atomic<bool>&) {
            const auto start = std::chrono::steady_clock::now();
            const bool first = [&] {
                std::lock_guard lock(record.mutex);
                return record.rounds == 0;
            }();
            if (first) {
                std::this_thread::sleep_for(
                    1500ms); // stands for a request the server is slow to answer
            }
            timeline.add(start);
            record.count();
        },
        [](const std::string&) {});
    ASSERT_TRUE(record.wait_for_rounds(2));
    worker.stop();
    std::lock_guard lock(timeline.mutex);
    const auto gap = timeline.rounds[1].first - timeline.rounds[0].second;
    EXPECT_LT(gap, 500ms) << "the round after a slow one started "
                          << std::chrono::duration_cast<std::chrono::milliseconds>(gap).count()
                          << " ms after it ended";
}

TEST(PeriodicWorker, AWakeRunsARoundWithoutWaitingForThePeriod) {
    Record record;
    PeriodicWorker worker(
        1h, [&](const std::atomic<bool>&) { record.count(); }, [](const std::string&) {});
    worker.wake();
    EXPECT_TRUE(record.wait_for_rounds(1));
    worker.wake();
    EXPECT_TRUE(record.wait_for_rounds(2));
}

TEST(PeriodicWorker, StopWaitsForTheRoundInFlightWhichSeesItAndRunsNoMore) {
    Record record;
    std::atomic<bool> saw_stop = false;
    PeriodicWorker worker(
        1h,
        [&](const std::atomic<bool>& stopping) {
            record.count();
            while (!stopping) { // a request that ends when the worker stops
                std::this_thread::yield();
            }
            saw_stop = true;
        },
        [](const std::string&) {});
    worker.wake();
    ASSERT_TRUE(record.wait_for_rounds(1));
    worker.stop();
    EXPECT_TRUE(saw_stop);
    worker.wake();
    worker.stop(); // twice is fine
    std::lock_guard lock(record.mutex);
    EXPECT_EQ(record.rounds, 1);
}

TEST(PeriodicWorker, AnExceptionIsToldAndTheNextRoundRuns) {
    Record record;
    PeriodicWorker worker(
        1h,
        [&](const std::atomic<bool>&) {
            const bool first = [&] {
                std::lock_guard lock(record.mutex);
                return record.rounds == 0;
            }();
            record.count();
            if (first) {
                throw std::runtime_error("type_error: not a string");
            }
        },
        [&](const std::string& what) {
            std::lock_guard lock(record.mutex);
            record.exceptions.push_back(what);
        });
    worker.wake();
    ASSERT_TRUE(record.wait_for_rounds(1));
    worker.wake();
    ASSERT_TRUE(record.wait_for_rounds(2));
    worker.stop();
    std::lock_guard lock(record.mutex);
    EXPECT_EQ(record.exceptions, std::vector<std::string>{"type_error: not a string"});
}

} // namespace util_periodic_worker
} // namespace
} // namespace shimkeeper::util
