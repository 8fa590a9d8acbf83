// The renewal threads' worker: rounds on a period or when woken, stop() waits for the round in
// flight and runs no more, and an exception that escapes a round is told and survived.
#include "shimkeeper/util/periodic_worker.hpp"

#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace shimkeeper::util {
namespace {

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

} // namespace
} // namespace shimkeeper::util
