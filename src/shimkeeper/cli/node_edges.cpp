#include "shimkeeper/cli/node_edges.hpp"

#include "shimkeeper/systemd/lazy_manager.hpp"

namespace shimkeeper::cli {

NodeEdges::NodeEdges(const Context& ctx, containerd::Detection detection)
    : m_ctx(ctx), m_detection(std::move(detection)),
      m_downloader(ctx.output == OutputFormat::json ? fetch::ProgressStyle::none
                                                    : fetch::progress_style_for_stderr()) {}

util::Expected<std::unique_ptr<NodeEdges>> NodeEdges::open(const Context& ctx,
                                                           reconcile::Restart restart) {
    auto detection =
        TRY(containerd::detect(ctx.root, ctx.settings.containerd, version_cache_of(ctx)));
    std::unique_ptr<NodeEdges> edges(new NodeEdges(ctx, std::move(detection)));
    if (restart == reconcile::Restart::no) {
        return edges;
    }
    if (edges->m_detection.unit.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "no systemd unit is known for this containerd (flavor " +
                              std::string(containerd::to_string(edges->m_detection.flavor)) +
                              "); set [containerd] unit, or use --no-restart");
    }
    // Connected on first use: a converged apply never talks to D-Bus.
    edges->m_systemd = std::make_unique<systemd::LazySystemdManager>(ctx.settings.systemd.bus);
    edges->m_containerd =
        health::make_containerd_client(ctx.root.on_host(edges->m_detection.socket).string());
    systemd::RestartGuardOptions guard_options;
    guard_options.min_spacing = ctx.settings.systemd.restart_spacing;
    edges->m_guard = std::make_unique<systemd::RestartGuard>(
        *edges->m_systemd, edges->m_clock, ctx.store.state_dir() / "restarts.json", guard_options);
    return edges;
}

reconcile::Node NodeEdges::node() const {
    return reconcile::Node{m_ctx.root,   m_ctx.settings,     m_ctx.store,   m_detection,
                           m_downloader, m_containerd.get(), m_guard.get(), m_ctx.log};
}

} // namespace shimkeeper::cli
