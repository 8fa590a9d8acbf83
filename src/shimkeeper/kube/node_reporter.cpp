#include "shimkeeper/kube/node_reporter.hpp"

#include "shimkeeper/kube/client.hpp"
#include "shimkeeper/kube/event_recorder.hpp"
#include "shimkeeper/kube/resource.hpp"

namespace shimkeeper::kube {

NodeReporter::NodeReporter(const ClusterSource& source, const ClusterReading& reading,
                           const util::Log& log)
    : m_source(source), m_reading(reading), m_log(log), m_keys(shim_keys_of(reading.view.node)) {}

void NodeReporter::warn_about_new_failures(const NodeReport& report) {
    std::vector<std::pair<std::string, const NodeShimState*>> fresh;
    for (const auto& [name, state] : report.wanted) {
        if (state.state != ShimState::failed && state.state != ShimState::conflict) {
            continue;
        }
        auto had = m_keys.annotations.find(name);
        const auto before =
            had == m_keys.annotations.end() ? std::nullopt : node_shim_state_of(had->second);
        if (!before || !before->same_as(state)) {
            fresh.emplace_back(name, &state);
        }
    }
    if (fresh.empty()) {
        return;
    }
    auto client = Client::from_kubeconfig(m_source.kubeconfig());
    if (!client) {
        m_log.warning("no Events sent: " + client.error().message());
        return;
    }
    const std::string node = m_source.node_name();
    EventRecorder events(*client, {"shimkeeper.containerd.x-k8s.io/agent", "shimkeeper-" + node});
    for (const auto& [name, state] : fresh) {
        const bool failed = state->state == ShimState::failed;
        const std::string reason = failed ? "InstallFailed" : "ConflictsWithNodeFile";
        const std::string note = "node " + node + ": " + state->reason;
        std::vector<ObjectReference> about{ObjectReference::of(m_reading.view.node)};
        if (const ShimSeen* shim = m_reading.find(name)) {
            about.insert(about.begin(), ObjectReference::of(shim->object));
        }
        for (const auto& regarding : about) {
            // Best effort: the Node's annotation already says it.
            if (auto sent = events.emit(regarding, EventType::warning, reason, "Install", note);
                !sent) {
                m_log.warning("Event about " + regarding.kind + "/" + regarding.name +
                              " not sent: " + sent.error().message());
            }
        }
    }
}

util::Expected<void> NodeReporter::publish(const NodeReport& report) {
    const auto patch = node_patch(m_keys, report.wanted, report.forget);
    if (!patch) {
        return {};
    }
    warn_about_new_failures(report);
    const std::string node = m_source.node_name();
    Client client = TRY(Client::from_kubeconfig(m_source.kubeconfig()));
    auto patched = client.merge_patch(nodes_resource(), "", node, *patch);
    if (!patched) {
        return std::unexpected(
            std::move(patched.error()).with_context("reporting shim state on Node " + node));
    }
    m_keys = shim_keys_of(*patched);
    m_log.debug("Node " + node + " patched: " + patch->dump());
    return {};
}

} // namespace shimkeeper::kube
