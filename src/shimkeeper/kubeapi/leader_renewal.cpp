#include "shimkeeper/kubeapi/leader_renewal.hpp"

#include "shimkeeper/kubeapi/request_bound.hpp"

namespace shimkeeper::kubeapi {

LeaderRenewal::LeaderRenewal(KubeConfig config, LeaderElector elector, LeaseSettings settings)
    : m_client(std::move(config)), m_elector(std::move(elector)), m_settings(std::move(settings)),
      m_renewed_at(m_elector.renewed_at()) {
    m_elector.use_client(m_client);
    m_thread = std::thread([this] { loop(); });
}

LeaderRenewal::~LeaderRenewal() {
    stop();
}

bool LeaderRenewal::leading(Clock::time_point now) const {
    std::lock_guard lock(m_mutex);
    return !m_lost && m_renewed_at && now < *m_renewed_at + m_settings.renew_deadline;
}

std::optional<std::string> LeaderRenewal::lost() const {
    std::lock_guard lock(m_mutex);
    return m_lost;
}

std::string LeaderRenewal::problem() const {
    std::lock_guard lock(m_mutex);
    return m_problem;
}

LeaderElector LeaderRenewal::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    return m_elector;
}

void LeaderRenewal::loop() {
    std::unique_lock lock(m_mutex);
    while (!m_lost &&
           !m_wake.wait_for(lock, m_settings.retry_period, [this] { return m_stopping.load(); })) {
        lock.unlock();
        // Each round a pass of its own: stop() fails whatever it has not asked yet.
        m_client.join_pass(std::make_shared<ApiPass>(std::function<void()>{},
                                                     [this] { return !m_stopping.load(); }));
        auto held = m_elector.try_acquire_or_renew(Clock::now());
        ++m_rounds;
        lock.lock();
        m_renewed_at = m_elector.renewed_at();
        m_problem = held ? "" : held.error().message();
        if (held && !*held) {
            m_lost = "Lease held by " + m_elector.observed_holder();
        }
    }
}

} // namespace shimkeeper::kubeapi
