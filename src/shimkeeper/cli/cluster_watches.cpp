#include "shimkeeper/cli/cluster_watches.hpp"

namespace shimkeeper::cli {

util::Expected<std::unique_ptr<ClusterWatches>> ClusterWatches::start(const GlobalOptions& options,
                                                                      const util::Log& log) {
    auto ctx = make_context(options);
    if (!ctx || !ctx->cluster) {
        return nullptr;
    }
    auto loop = TRY(kube::CurlEventLoop::create());
    std::unique_ptr<ClusterWatches> out(new ClusterWatches(std::move(loop), log));
    out->m_watch = TRY(kube::ClusterWatch::create(*out->m_loop, *ctx->cluster, log));
    TRY(out->m_watch->start());

    const kube::ClusterSource& source = *ctx->cluster;
    out->m_coordinator_client = std::make_unique<kube::Client>(
        TRY(kube::Client::from_kubeconfig(source.agent_kubeconfig())));
    kube::CoordinatorSettings settings;
    settings.ns = source.settings().namespace_name;
    settings.identity = source.node_name();
    out->m_coordinator = std::make_unique<kube::Coordinator>(
        *out->m_loop, *out->m_coordinator_client, settings,
        kube::EventSource{"shimkeeper.containerd.x-k8s.io/coordinator",
                          "shimkeeper-" + source.node_name()},
        log);
    TRY(out->m_coordinator->start());
    // Arms the loop's timers so that its fd becomes readable when the first one is due.
    TRY(out->m_loop->dispatch_pending());
    return out;
}

ClusterWatches::~ClusterWatches() {
    if (m_coordinator) {
        // Another agent takes over at once instead of after the lease expires.
        if (auto released = m_coordinator->release(); !released) {
            m_log.warning("coordinator: " + released.error().message());
        }
    }
}

daemon::ChangeSource ClusterWatches::change_source() {
    return {m_loop->fd(), "cluster watches", [this] {
                if (auto ran = m_loop->dispatch_pending(); !ran) {
                    m_log.error("cluster watches: " + ran.error().message());
                }
                // A watch that starts or stops failing is logged once, not per retry.
                const std::string problem = m_watch->problem();
                if (problem != m_last_problem) {
                    if (!problem.empty()) {
                        m_log.warning("cluster watches: " + problem);
                    } else {
                        m_log.info("cluster watches: in sync");
                    }
                    m_last_problem = problem;
                }
                return m_watch->take_changed();
            }};
}

} // namespace shimkeeper::cli
