// A thread that runs a round every `period` (start to start: a round longer than the period is
// followed at once), or at once when woken, until it is stopped: the
// renewals of rollout slots and of the coordinator's election Lease, which must go on while the
// thread that made them is blocked in a transaction or a pass.
//
// A round runs without the worker's lock, so it may wait on the network; its owner keeps what the
// rounds produce under a lock of its own. An exception that escapes a round is caught, told to
// `on_exception`, and the next round runs as planned: an exception in a thread of its own would
// otherwise end the process (std::terminate), taking the transaction it serves with it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace shimkeeper::util {

class PeriodicWorker {
public:
    // The worker's own flag: a round checks it between requests, and asks nothing more once set.
    using Round = std::function<void(const std::atomic<bool>& stopping)>;

    // The first round runs one period after construction (or when woken).
    PeriodicWorker(std::chrono::milliseconds period, Round round,
                   std::function<void(const std::string&)> on_exception);
    ~PeriodicWorker();
    PeriodicWorker(const PeriodicWorker&) = delete;
    PeriodicWorker& operator=(const PeriodicWorker&) = delete;

    // The next round at once, or right after the one running.
    void wake();
    // No round after the one running, which is waited for. Idempotent.
    void stop();

private:
    void loop();

    const std::chrono::milliseconds m_period;
    Round m_round;
    std::function<void(const std::string&)> m_on_exception;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_woken = false;
    std::atomic<bool> m_stopping = false;
    std::thread m_thread;
};

} // namespace shimkeeper::util
