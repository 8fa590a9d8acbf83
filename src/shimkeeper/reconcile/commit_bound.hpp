// How long a transaction may still take once it has made its first change: the time a rolling
// rollout must keep this node's slot after the node says it is past its point of no return
// (cluster/model/slot_lease.hpp, the committing mark), even if the node is cut off meanwhile.
//
// From the first change to the commit or the end of the rollback, a transaction writes links and
// the config (k_commit_margin covers those and the journal), and with Restart::yes restarts
// containerd and waits for it to be healthy, and on failure does both once more for the
// rollback. One restart through the RestartGuard is at most two attempts (the second after
// clearing a start limit), each waiting for the spacing or for the unit's start limit interval
// to pass (k_start_limit_allowance: systemd's default interval is 10 s) and then for the job
// (RestartGuardOptions::job_timeout). A unit with a start limit interval above the allowance can
// outlast the bound: the allowance is generous rather than exact.
#pragma once

#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/spec/agent_settings.hpp"

#include <chrono>

namespace shimkeeper::reconcile {

inline constexpr std::chrono::seconds k_commit_margin{30};
inline constexpr std::chrono::seconds k_start_limit_allowance{60};

std::chrono::seconds longest_commit(const spec::AgentSettings& settings, Restart restart);

} // namespace shimkeeper::reconcile
