#include "shimkeeper/reconcile/commit_bound.hpp"

#include "shimkeeper/systemd/restart_guard.hpp"

namespace shimkeeper::reconcile {

std::chrono::seconds longest_commit(const spec::AgentSettings& settings, Restart restart) {
    using std::chrono::ceil;
    using std::chrono::seconds;
    if (restart == Restart::no) {
        return k_commit_margin;
    }
    const seconds attempt = ceil<seconds>(settings.systemd.restart_spacing) +
                            k_start_limit_allowance +
                            ceil<seconds>(systemd::RestartGuardOptions{}.job_timeout);
    const seconds restart_and_check = 2 * attempt + ceil<seconds>(settings.health.timeout);
    return k_commit_margin + 2 * restart_and_check; // the change, then its rollback
}

} // namespace shimkeeper::reconcile
