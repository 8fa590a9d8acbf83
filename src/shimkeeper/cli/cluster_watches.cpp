#include "shimkeeper/cli/cluster_watches.hpp"

namespace shimkeeper::cli {

util::Expected<std::unique_ptr<cluster::agent::AgentWatches>>
start_cluster_watches(const GlobalOptions& options, const util::Log& log) {
    auto ctx = make_context(options);
    if (!ctx || !ctx->cluster) {
        return nullptr;
    }
    return cluster::agent::AgentWatches::start(*ctx->cluster, log);
}

daemon::ChangeSource change_source_of(cluster::agent::AgentWatches& watches) {
    return {watches.fd(), "cluster watches", [&watches] { return watches.dispatch(); },
            [&watches] { return watches.take_urgent(); }, cluster::agent::k_cluster_debounce};
}

} // namespace shimkeeper::cli
