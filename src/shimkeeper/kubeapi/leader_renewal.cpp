#include "shimkeeper/kubeapi/leader_renewal.hpp"

#include "shimkeeper/kubeapi/request_bound.hpp"

#include <algorithm>

namespace shimkeeper::kubeapi {

std::chrono::milliseconds renewal_request_bound(const LeaseSettings& settings) {
    const auto half =
        std::chrono::duration_cast<std::chrono::milliseconds>(settings.renew_deadline) / 2;
    return std::clamp(half, k_min_request_time, k_max_request_time);
}

namespace {

Client make_client(KubeConfig config, std::shared_ptr<RequestStats> stats,
                   const LeaseSettings& settings) {
    Client client(std::move(config));
    client.connection().set_stats(std::move(stats));
    client.connection().set_request_time(renewal_request_bound(settings));
    return client;
}

} // namespace

LeaderRenewal::LeaderRenewal(KubeConfig config, LeaderElector elector, LeaseSettings settings,
                             std::shared_ptr<RequestStats> stats)
    : m_client(make_client(std::move(config), std::move(stats), settings)),
      m_elector(std::move(elector)), m_settings(std::move(settings)),
      m_renewed_at(m_elector.renewed_at()),
      m_worker(
          m_settings.retry_period,
          [this](const std::atomic<bool>& stopping) { renew_round(stopping); },
          [this](const std::string& what) {
              std::lock_guard lock(m_mutex);
              m_problem = "a renewal round failed: " + what;
          }) {}

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
    m_worker.stop();
    return m_elector;
}

void LeaderRenewal::renew_round(const std::atomic<bool>& stopping) {
    {
        std::lock_guard lock(m_mutex);
        if (m_lost) {
            return; // the term is over: another holder has the Lease
        }
    }
    // Each round a pass of its own: stop() fails whatever it has not asked yet.
    m_client.join_pass(std::make_shared<ApiPass>(std::function<void()>{},
                                                 [&stopping] { return !stopping.load(); }));
    auto held = m_elector.try_acquire_or_renew(m_client, Clock::now());
    ++m_rounds;
    if (!held && held.error().code() == util::ErrorCode::network) {
        drop_thread_connections(); // the next round does not wait on the same connection again
    }
    std::lock_guard lock(m_mutex);
    m_renewed_at = m_elector.renewed_at();
    m_problem = held ? "" : held.error().message();
    if (held && !*held) {
        m_lost = "Lease held by " + m_elector.observed_holder();
    }
}

} // namespace shimkeeper::kubeapi
