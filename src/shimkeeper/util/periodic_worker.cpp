#include "shimkeeper/util/periodic_worker.hpp"

#include <exception>

namespace shimkeeper::util {

PeriodicWorker::PeriodicWorker(std::chrono::milliseconds period, Round round,
                               std::function<void(const std::string&)> on_exception)
    : m_period(period), m_round(std::move(round)), m_on_exception(std::move(on_exception)) {
    m_thread = std::thread([this] { loop(); });
}

PeriodicWorker::~PeriodicWorker() {
    stop();
}

void PeriodicWorker::wake() {
    {
        std::lock_guard lock(m_mutex);
        m_woken = true;
    }
    m_wake.notify_all();
}

void PeriodicWorker::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable() && m_thread.get_id() != std::this_thread::get_id()) {
        m_thread.join();
    }
}

void PeriodicWorker::loop() {
    std::unique_lock lock(m_mutex);
    auto next = std::chrono::steady_clock::now() + m_period;
    for (;;) {
        // Start to start, as client-go's renewals tick: a round that took longer than the period
        // is followed at once, not a whole period later. A renewal must land within a deadline
        // counted from the last one's start; on a loaded API server a slow request plus a
        // period's wait plus another slow request is what misses it.
        m_wake.wait_until(lock, next, [this] { return m_stopping.load() || m_woken; });
        if (m_stopping) {
            return;
        }
        m_woken = false;
        next = std::chrono::steady_clock::now() + m_period;
        lock.unlock();
        try {
            m_round(m_stopping);
        } catch (const std::exception& e) {
            m_on_exception(e.what());
        } catch (...) {
            m_on_exception("an exception of an unknown type");
        }
        lock.lock();
    }
}

} // namespace shimkeeper::util
