// The cluster side of `status` and `plan`, with [kube]: who the agent is (its kubeconfigs and
// node name), whether the API server answered (or since when it has not), and every Shim: does
// it select this node and why, and what this node's Node says about it.
#pragma once

#include "shimkeeper/cli/context.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

// After ctx.load_desired() ran (whatever it returned): null without [kube]. Decides the node name
// if the load did not (one request).
nlohmann::json cluster_status_json(Context& ctx, const util::Expected<spec::DesiredShims>& loaded);
void print_cluster_status(const nlohmann::json& cluster);
// Whether the API server answered the reading, or since when it has not or has refused the
// credential (and the file to renew): the part of the above that the daemon's status.json
// carries too.
nlohmann::json cluster_connection_json(const cluster::agent::ClusterReading& reading);

} // namespace shimkeeper::cli
