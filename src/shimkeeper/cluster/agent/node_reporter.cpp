#include "shimkeeper/cluster/agent/node_reporter.hpp"

#include "shimkeeper/cluster/agent/write_refusal_notices.hpp"
#include "shimkeeper/cluster/model/write_refusals.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/kubeapi/event_recorder.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

namespace shimkeeper::cluster::agent {

NodeReporter::NodeReporter(const ClusterSource& source, const ClusterReading& reading,
                           const util::Log& log)
    : m_source(source), m_reading(reading), m_log(log),
      m_keys(model::shim_keys_of(reading.view.node)) {}

std::vector<kubeapi::ObjectReference> NodeReporter::shims_reported(const NodeReport& report) const {
    std::set<std::string> names(report.forget.begin(), report.forget.end());
    for (const auto& [name, state] : report.wanted) {
        names.insert(name);
    }
    if (report.requests) {
        for (const auto& [name, request] : *report.requests) {
            names.insert(name);
        }
    }
    for (const auto* holds : {&report.releases, &report.committing}) {
        for (const model::SlotHold& hold : *holds) {
            names.insert(hold.shim);
        }
    }
    std::vector<kubeapi::ObjectReference> out;
    for (const auto& name : names) {
        out.push_back(reference_of(name, ""));
    }
    return out;
}

kubeapi::ObjectReference NodeReporter::reference_of(const std::string& shim,
                                                    const std::string& uid) const {
    const ShimSeen* seen = m_reading.find(shim);
    return seen != nullptr ? kubeapi::ObjectReference::of(seen->object) : shim_reference(shim, uid);
}

void NodeReporter::warn_about_new_failures(const NodeReport& report) {
    std::vector<std::pair<std::string, const model::NodeShimState*>> fresh;
    for (const auto& [name, state] : report.wanted) {
        if (state.state != model::ShimState::failed && state.state != model::ShimState::conflict &&
            !report.blocked.contains(name)) {
            continue;
        }
        auto had = m_keys.annotations.find(name);
        const auto before =
            had == m_keys.annotations.end() ? std::nullopt : model::node_shim_state_of(had->second);
        if (!before || !before->same_as(state)) {
            fresh.emplace_back(name, &state);
        }
    }
    if (fresh.empty()) {
        return;
    }
    auto client = m_source.client();
    if (!client) {
        m_log.warning("no Events sent: " + client.error().message());
        return;
    }
    const std::string node = m_source.node_name();
    kubeapi::EventRecorder events(*client,
                                  {model::k_agent_controller, model::agent_instance(node)});
    for (const auto& [name, state] : fresh) {
        const bool removing = state->state == model::ShimState::removing;
        const std::string reason = removing ? "RemovalBlocked"
                                   : state->state == model::ShimState::failed
                                       ? "InstallFailed"
                                       : "ConflictsWithNodeFile";
        const std::string action = removing ? "Uninstall" : "Install";
        const std::string note = "node " + node + ": " + state->reason;
        std::vector<kubeapi::ObjectReference> about{
            kubeapi::ObjectReference::of(m_reading.view.node)};
        if (const ShimSeen* shim = m_reading.find(name)) {
            about.insert(about.begin(), kubeapi::ObjectReference::of(shim->object));
        }
        for (const auto& regarding : about) {
            // Best effort: the Node's annotation already says it.
            if (auto sent =
                    events.emit(regarding, kubeapi::EventType::warning, reason, action, note);
                !sent) {
                m_log.warning("Event about " + regarding.kind + "/" + regarding.name +
                              " not sent: " + sent.error().message());
            }
        }
    }
}

util::Expected<void> NodeReporter::publish(const NodeReport& report) {
    std::vector<model::SlotHold> holds = report.releases;
    holds.insert(holds.end(), report.committing.begin(), report.committing.end());
    const auto patch = model::with_slot_holds(
        model::node_patch(m_keys, report.wanted, report.forget, report.requests), holds);
    if (!patch) {
        return {};
    }
    warn_about_new_failures(report);
    const std::string node = m_source.node_name();
    kubeapi::Client client = TRY(m_source.client());
    auto patched = client.merge_patch(kubeapi::nodes_resource(), "", node, *patch);
    std::optional<util::Error> failed;
    if (!patched) {
        failed = std::move(patched.error()).with_context("reporting shim state on Node " + node);
    }
    WriteRefusalNotices& notices = WriteRefusalNotices::of_this_process();
    if (auto unsent = notices.after_write(client, node, shims_reported(report), "ReportState",
                                          failed ? &*failed : nullptr)) {
        m_log.warning(unsent->message());
    }
    if (!failed && !holds.empty()) {
        // The slot entries it carried (a take, a committing mark, a release) were accepted: a
        // HoldSlot refusal told before gets its Normal Event, as a write of their own would.
        std::vector<kubeapi::ObjectReference> held;
        for (const model::SlotHold& hold : holds) {
            held.push_back(reference_of(hold.shim, hold.uid));
        }
        if (auto unsent = notices.after_write(client, node, held, "HoldSlot", nullptr)) {
            m_log.warning(unsent->message());
        }
    }
    if (failed) {
        return std::unexpected(std::move(*failed));
    }
    m_keys = model::shim_keys_of(*patched);
    m_log.debug("Node " + node + " patched: " + patch->dump());
    return {};
}

} // namespace shimkeeper::cluster::agent
