// `shimkeeper run` in cluster mode: the node agent's watches (cluster/agent/agent_watches.hpp),
// started from the global options and plugged into the daemon's loop as a change source.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/cluster/agent/agent_watches.hpp"
#include "shimkeeper/daemon/daemon.hpp"

#include <memory>

namespace shimkeeper::cli {

// nullptr without [kube] (or when the settings do not load yet: each reconcile reports that);
// an Error when the watches cannot be set up at all.
util::Expected<std::unique_ptr<cluster::agent::AgentWatches>>
start_cluster_watches(const GlobalOptions& options, const util::Log& log);

// The watches as a change source of the daemon; they must outlive its loop. A slot taken by the
// watches wakes the daemon at once, bypassing its debounce.
daemon::ChangeSource change_source_of(cluster::agent::AgentWatches& watches);

} // namespace shimkeeper::cli
