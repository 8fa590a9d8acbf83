#include "shimkeeper/cluster/agent/cluster_watch.hpp"

#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

namespace shimkeeper::cluster::agent {

namespace {

using nlohmann::json;

// What of the Node decides which Shims select it: labels other than shimkeeper's own, and the
// machineID the agent checks.
json node_fingerprint(const json& node) {
    json labels = json::object();
    for (const auto& [key, value] : model::metadata_strings(node, "labels")) {
        if (!key.starts_with(model::k_shim_key_prefix)) {
            labels[key] = value;
        }
    }
    return {labels, node.value(json::json_pointer("/status/nodeInfo/machineID"), std::string())};
}

// The slot count a node reads from the Shim (rollout_policy.hpp): a percentage waits for the
// coordinator's status to resolve it for the Shim's generation, a number does not. Not the
// status itself: the coordinator writes it after every apply, and each write would wake every
// agent of the cluster for nothing.
json resolved_slots(const json& shim) {
    auto policy = model::rollout_policy_of(shim);
    if (!policy || !policy->rolling) {
        return nullptr;
    }
    auto slots = model::slots_for_node(*policy, shim);
    return slots ? json(*slots) : json();
}

} // namespace

json shim_fingerprint(const json& shim) {
    const json& metadata = shim.contains("metadata") ? shim["metadata"] : json::object();
    return {metadata.value("uid", std::string()), metadata.value("generation", 0L),
            metadata.contains("deletionTimestamp"), resolved_slots(shim)};
}

util::Expected<std::unique_ptr<ClusterWatch>>
ClusterWatch::create(kubeapi::CurlEventLoop& loop, const ClusterSource& source, util::Log log) {
    if (source.node_name().empty()) {
        return util::fail(util::ErrorCode::invalid_input, "cluster: " + source.identity_problem());
    }
    kubeapi::Client agent = TRY(kubeapi::Client::from_kubeconfig(source.kubeconfig()));
    kubeapi::Client node = TRY(kubeapi::Client::from_kubeconfig(source.kubeconfig()));
    return std::unique_ptr<ClusterWatch>(
        new ClusterWatch(loop, std::move(agent), std::move(node), source.node_name(), log));
}

util::Expected<void> ClusterWatch::start() {
    m_shim_watch = std::make_unique<kubeapi::Watch>(
        m_agent.connection(), m_loop, model::shims_resource(), "", kubeapi::WatchSettings{},
        [this](const kubeapi::WatchEvent& e) { on_shim(e); });
    kubeapi::WatchSettings node_settings;
    node_settings.field_selector = "metadata.name=" + m_node_name;
    m_node_watch = std::make_unique<kubeapi::Watch>(
        m_node_client.connection(), m_loop, kubeapi::nodes_resource(), "", node_settings,
        [this](const kubeapi::WatchEvent& e) { on_node(e); });
    TRY(m_shim_watch->start());
    TRY(m_node_watch->start());
    return {};
}

void ClusterWatch::on_shim(const kubeapi::WatchEvent& event) {
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced:
        if (m_shims_synced) {
            note_relist("Shims", *m_shim_watch);
        }
        m_shims.clear();
        for (const json& item : event.items) {
            m_shims[kubeapi::name_of(item)] = trimmed(item);
        }
        m_shims_synced = true;
        break;
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified:
        m_shims[kubeapi::name_of(event.object)] = trimmed(event.object);
        break;
    case kubeapi::WatchEvent::Kind::deleted:
        m_shims.erase(kubeapi::name_of(event.object));
        break;
    }
    note_fingerprint();
}

void ClusterWatch::on_node(const kubeapi::WatchEvent& event) {
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced:
        if (m_node_synced) {
            note_relist("Node " + m_node_name, *m_node_watch);
        }
        m_node = event.items.empty() ? json() : trimmed(event.items.front());
        m_node_synced = true;
        break;
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified:
        m_node = trimmed(event.object);
        break;
    case kubeapi::WatchEvent::Kind::deleted:
        m_node = json();
        break;
    }
    note_fingerprint();
}

// A second list replaces what the watch held; only a real change wakes the reconcile (the
// fingerprint), so objects listed again as they were are not installed again.
void ClusterWatch::note_relist(const std::string& what, const kubeapi::Watch& watch) const {
    const std::string& why = watch.state().last_problem();
    m_log.info("cluster: listed the " + what + " again" + (why.empty() ? "" : " after " + why));
}

void ClusterWatch::note_fingerprint() {
    json shims = json::object();
    for (const auto& [name, shim] : m_shims) {
        shims[name] = shim_fingerprint(shim);
    }
    const std::string now =
        json{shims, m_node.is_object() ? node_fingerprint(m_node) : json()}.dump();
    if (now != m_fingerprint) {
        m_fingerprint = now;
        m_changed = true;
    }
}

std::optional<ClusterSnapshot> ClusterWatch::current() const {
    if (!problem().empty()) {
        return std::nullopt;
    }
    ClusterSnapshot view;
    view.node = m_node;
    for (const auto& [name, shim] : m_shims) {
        view.shims.push_back(shim);
    }
    return view;
}

const nlohmann::json* ClusterWatch::shim(const std::string& name) const {
    auto found = m_shims.find(name);
    return found == m_shims.end() ? nullptr : &found->second;
}

std::string ClusterWatch::problem() const {
    if (!m_shim_watch || !m_node_watch) {
        return "the cluster watches are not started";
    }
    for (const kubeapi::Watch* watch : {m_shim_watch.get(), m_node_watch.get()}) {
        if (watch->stopped()) {
            return watch->stopped()->message();
        }
        if (watch->state().failures() > 0) {
            return watch->state().last_problem();
        }
    }
    if (!m_shims_synced || !m_node_synced) {
        return "the cluster watches have not listed yet";
    }
    if (!m_node.is_object()) {
        return "Node " + m_node_name + " does not exist";
    }
    return {};
}

bool ClusterWatch::take_changed() {
    return std::exchange(m_changed, false);
}

} // namespace shimkeeper::cluster::agent
