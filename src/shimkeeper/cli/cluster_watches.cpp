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
    out->m_watch = TRY(kube::ClusterWatch::create(*out->m_loop, *ctx->cluster));
    TRY(out->m_watch->start());
    // Arms the loop's timers so that its fd becomes readable when the first one is due.
    TRY(out->m_loop->dispatch_pending());
    return out;
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
