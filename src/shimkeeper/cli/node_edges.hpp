// The real edges of a node, opened for one command: containerd detection, the downloader, and
// (when containerd is to be restarted) systemd over D-Bus, containerd's API and the restart guard.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/health/containerd_client.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/systemd/clock.hpp"
#include "shimkeeper/systemd/manager.hpp"
#include "shimkeeper/systemd/restart_guard.hpp"

#include <memory>

namespace shimkeeper::cli {

class NodeEdges {
public:
    static util::Expected<std::unique_ptr<NodeEdges>> open(const Context& ctx,
                                                           reconcile::Restart restart);

    reconcile::Node node() const;
    const containerd::Detection& detection() const { return m_detection; }
    health::ContainerdClient* containerd() const { return m_containerd.get(); }

private:
    NodeEdges(const Context& ctx, containerd::Detection detection);

    const Context& m_ctx;
    containerd::Detection m_detection;
    mutable fetch::CurlDownloader m_downloader;
    std::unique_ptr<systemd::SystemdManager> m_systemd;
    std::unique_ptr<health::ContainerdClient> m_containerd;
    systemd::RealClock m_clock;
    std::unique_ptr<systemd::RestartGuard> m_guard;
};

} // namespace shimkeeper::cli
