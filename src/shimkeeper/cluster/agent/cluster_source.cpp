#include "shimkeeper/cluster/agent/cluster_source.hpp"

#include "shimkeeper/cluster/agent/cluster_outage.hpp"
#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/kubeapi/self_identity.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <algorithm>
#include <cctype>
#include <unistd.h>

namespace shimkeeper::cluster::agent {

namespace {

using nlohmann::json;

std::string trim(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.pop_back();
    }
    return text;
}

std::vector<ShimSeen> shims_on_node(const ClusterSnapshot& view) {
    const auto labels = model::metadata_strings(view.node, "labels");
    std::vector<ShimSeen> out;
    for (const json& shim : view.shims) {
        const json& metadata = shim.contains("metadata") ? shim["metadata"] : json::object();
        ShimSeen entry;
        entry.name = metadata.value("name", std::string("?"));
        entry.generation = metadata.value("generation", 0L);
        entry.deleting = metadata.contains("deletionTimestamp");
        entry.selects = model::selects_node(shim, labels);
        entry.object = shim;
        out.push_back(std::move(entry));
    }
    return out;
}

} // namespace

std::string ClusterReading::outage() const {
    if (live) {
        return {};
    }
    if (refused) {
        return "credentials refused since " + view.refused_since + " (" + problem + "): renew " +
               renew + "; keeping the Shims read at " + view.read_at;
    }
    return "unreachable since " + view.unreachable_since + " (" + problem +
           "): keeping the Shims read at " + view.read_at;
}

const ShimSeen* ClusterReading::find(std::string_view name) const {
    auto found = std::ranges::find(shims, name, &ShimSeen::name);
    return found == shims.end() ? nullptr : &*found;
}

ClusterSource::ClusterSource(spec::KubeSettings settings, std::string arch, ClusterPlaces places)
    : m_settings(std::move(settings)), m_arch(std::move(arch)), m_places(std::move(places)) {
    if (m_settings.kubeconfig) {
        m_kubeconfig = *m_settings.kubeconfig;
    } else {
        for (const auto& candidate : m_places.kubelet_kubeconfigs) {
            std::error_code ec;
            if (std::filesystem::is_regular_file(candidate, ec)) {
                m_kubeconfig = candidate.string();
                break;
            }
        }
    }
}

util::Expected<kubeapi::Client> ClusterSource::client() const {
    kubeapi::Client client = TRY(kubeapi::Client::from_kubeconfig(m_kubeconfig));
    client.join_pass(m_pass);
    return client;
}

std::string ClusterSource::credential_file() const {
    auto config = kubeapi::load_kubeconfig(m_kubeconfig);
    if (config && !config->token_file.empty()) {
        return config->token_file.string();
    }
    if (config && config->token.empty() && !config->client_certificate.file.empty()) {
        return config->client_certificate.file.string();
    }
    return m_kubeconfig;
}

void ClusterSource::assume_identity(std::string node_name, std::string origin) {
    m_node_name = std::move(node_name);
    m_node_name_origin = std::move(origin);
    m_identity_problem.clear();
    m_identified = !m_node_name.empty();
}

// Decision: the node name comes from the API server's view of the credential, so a setting or
// a hostname can never make the agent report for a Node its credential is not confined to
// (the policies in deploy/ would refuse it anyway; this refuses it before the node changes).
// Only an API server that does not answer falls back, to what this node read before.
void ClusterSource::identify() {
    m_identified = true;
    m_identity_problem.clear();
    if (m_kubeconfig.empty()) {
        m_identity_problem = "[kube] has no kubeconfig and no kubelet kubeconfig was found; set "
                             "kubeconfig to this node's credential";
        return;
    }
    // A kubeconfig that cannot be read yet (an image baked before its first boot writes it) is
    // no answer either: like an API server that does not answer, the node name stays unconfirmed.
    auto client = this->client();
    util::Expected<kubeapi::SelfIdentity> reviewed =
        client ? kubeapi::review_self(*client)
               : util::Expected<kubeapi::SelfIdentity>(std::unexpected(client.error()));
    if (reviewed && reviewed->node_name.empty()) {
        m_identity_problem =
            "the credential of " + m_kubeconfig + " is " + reviewed->username +
            ", which is not confined to a Node: use a token of "
            "shimkeeper-system/shimkeeper-node bound to this Node (kubectl -n shimkeeper-system "
            "create token shimkeeper-node --bound-object-kind Node --bound-object-name <node>) "
            "or the kubelet's kubeconfig";
        return;
    }
    if (reviewed) {
        if (m_settings.node_name && *m_settings.node_name != reviewed->node_name) {
            m_identity_problem = "[kube] node_name is " + *m_settings.node_name +
                                 " but the credential of " + m_kubeconfig + " is " + reviewed->how +
                                 ": remove node_name or fix it";
            return;
        }
        m_node_name = reviewed->node_name;
        m_node_name_origin = reviewed->how + " (" + m_kubeconfig + ")";
        return;
    }
    // No answer (unreachable, unreadable, or refused, which read() rides out alike): the
    // Node of the last reading kept, else [kube] node_name, both said to be unconfirmed. The
    // API server's policies confine whatever the credential then writes.
    auto remembered = ClusterMemory(m_places.memory_file).load();
    const std::string kept =
        remembered && *remembered ? kubeapi::name_of((*remembered)->node) : std::string();
    if (!kept.empty() && (!m_settings.node_name || *m_settings.node_name == kept)) {
        m_node_name = kept;
        m_node_name_origin =
            "the last reading kept, not confirmed (" + reviewed.error().message() + ")";
    } else if (m_settings.node_name) {
        m_node_name = *m_settings.node_name;
        m_node_name_origin = "[kube] node_name, not confirmed (" + reviewed.error().message() + ")";
    } else {
        m_identity_problem = reviewed.error().message();
    }
}

util::Expected<ClusterSnapshot> ClusterSource::read_live(bool& from_feed) const {
    from_feed = false;
    if (m_feed != nullptr) {
        if (auto fed = m_feed->current()) {
            from_feed = true;
            return *fed;
        }
    }
    const std::string node = node_name();
    kubeapi::Client client = TRY(this->client());
    auto node_object = client.get(kubeapi::nodes_resource(), "", node);
    if (!node_object) {
        return std::unexpected(
            std::move(node_object.error()).with_context("reading this node's Node " + node));
    }
    auto shims = client.list(model::shims_resource(), "");
    if (!shims) {
        return std::unexpected(std::move(shims.error()).with_context("listing Shims"));
    }
    ClusterSnapshot view;
    view.node = trimmed(std::move(*node_object));
    for (json& shim : shims->items) {
        view.shims.push_back(trimmed(std::move(shim)));
    }
    return view;
}

util::Expected<void> ClusterSource::check_machine(const ClusterSnapshot& view) const {
    const std::string recorded =
        view.node.value(json::json_pointer("/status/nodeInfo/machineID"), std::string());
    std::error_code ec;
    if (recorded.empty() || !std::filesystem::exists(m_places.machine_id, ec)) {
        return {};
    }
    const std::string ours = trim(TRY(util::read_file(m_places.machine_id)));
    if (ours.empty() || ours == recorded) {
        return {};
    }
    return util::fail(util::ErrorCode::invalid_input,
                      "Node " + node_name() + " belongs to machine " + recorded +
                          " (its status.nodeInfo.machineID) but this host's " +
                          m_places.machine_id.string() + " says " + ours +
                          ": refusing to act for another machine's Node; give this host its "
                          "own Node's credential");
}

util::Expected<ClusterReading> ClusterSource::read() {
    const ClusterMemory memory(m_places.memory_file);
    auto remembered = memory.load();
    if (!m_identified || m_node_name.empty()) {
        identify();
        if (m_node_name.empty()) {
            return util::fail(util::ErrorCode::invalid_input, "cluster: " + m_identity_problem);
        }
    }
    bool from_feed = false;
    auto live = read_live(from_feed);
    ClusterReading reading;
    if (live) {
        TRY(check_machine(*live)); // before it is remembered: nothing is kept for a wrong Node
        live->read_at = util::now_rfc3339();
        if (remembered && *remembered) {
            live->unreachable_since = (*remembered)->unreachable_since;
            live->refused_since = (*remembered)->refused_since;
        }
        update_outage_since(*live, from_feed ? ApiAnswer::unproven : ApiAnswer::answered,
                            live->read_at);
        const bool same = remembered && *remembered && (*remembered)->same_objects(*live) &&
                          (*remembered)->unreachable_since == live->unreachable_since &&
                          (*remembered)->refused_since == live->refused_since;
        if (same) {
            live->read_at = (*remembered)->read_at; // unchanged: no write
        } else if (m_remember) {
            TRY(memory.save(*live));
        }
        reading.view = std::move(*live);
    } else {
        const std::optional<ApiAnswer> outage = outage_of(live.error());
        if (!outage) {
            return std::unexpected(std::move(live.error()));
        }
        const bool refused = *outage == ApiAnswer::refused;
        if (!remembered) {
            return std::unexpected(std::move(remembered.error()));
        }
        if (!*remembered) {
            const std::string why =
                refused ? "the API server refused the credential (renew " + credential_file() + ")"
                        : std::string("the API server did not answer");
            return std::unexpected(std::move(live.error())
                                       .with_context(why + " and this node has not read the "
                                                           "cluster before, so its Shims are "
                                                           "unknown"));
        }
        reading.view = std::move(**remembered);
        reading.live = false;
        reading.refused = refused;
        reading.problem = live.error().message();
        if (refused) {
            reading.renew = credential_file();
        }
        const bool changed = update_outage_since(reading.view, *outage, util::now_rfc3339());
        if (changed && m_remember) {
            TRY(memory.save(reading.view));
        }
    }
    if (!reading.live) {
        TRY(check_machine(reading.view));
    }
    reading.shims = shims_on_node(reading.view);
    return reading;
}

util::Expected<std::string> ClusterSource::settle_pass() {
    if (!m_last || !m_remember) {
        return std::string();
    }
    const ClusterMemory memory(m_places.memory_file);
    auto remembered = TRY(memory.load());
    if (!remembered) {
        return std::string();
    }
    ClusterSnapshot& kept = *remembered;
    const bool outage_kept = !kept.unreachable_since.empty() || !kept.refused_since.empty();
    // A refusal met by any request of the pass (its reading may have come from open watches,
    // which a token expired or gone does not close).
    std::optional<util::Error> refusal = m_pass->refused();
    if (!refusal && !m_pass->no_answer() && m_pass->answers() == 0 && outage_kept) {
        // An outage stands until a request is answered; a pass that made none asks once.
        kubeapi::Client client = TRY(this->client());
        auto node = client.get(kubeapi::nodes_resource(), "", node_name());
        if (!node && node.error().code() == util::ErrorCode::refused) {
            refusal = std::move(node.error());
        }
    }
    const bool was_live = m_last->live;
    // A reading load() took from the memory proves nothing either way (load() said the outage).
    const ApiAnswer answer = refusal               ? ApiAnswer::refused
                             : m_pass->no_answer() ? ApiAnswer::unanswered
                             : was_live            ? ApiAnswer::answered
                                                   : ApiAnswer::unproven;
    const bool changed = update_outage_since(kept, answer, util::now_rfc3339());
    if (answer == ApiAnswer::refused || answer == ApiAnswer::unanswered) {
        m_last->live = false;
        m_last->refused = refusal.has_value();
        m_last->renew = refusal ? credential_file() : std::string();
        m_last->problem = refusal ? refusal->message() : m_pass->no_answer()->message();
    }
    if (answer != ApiAnswer::unproven) {
        m_last->view.unreachable_since = kept.unreachable_since;
        m_last->view.refused_since = kept.refused_since;
    }
    if (changed) {
        TRY(memory.save(kept));
    }
    return was_live ? m_last->outage() : std::string(); // load() said it otherwise
}

util::Expected<spec::DesiredShims> ClusterSource::load() {
    m_last.reset();
    ClusterReading reading = TRY(read());
    spec::DesiredShims out;
    if (!reading.live) {
        out.warnings.push_back("cluster: " + reading.outage());
    }
    std::optional<util::Error> first_invalid;
    for (ShimSeen& shim : reading.shims) {
        if (!shim.selects) {
            continue;
        }
        if (shim.deleting) {
            out.warnings.push_back("Shim/" + shim.name + " is being deleted: uninstalling it here");
            continue;
        }
        auto spec = model::shim_spec_of(shim.object, m_arch);
        if (spec) {
            // The rollout strategy decides when this node may change: one it cannot read
            // stops the node from changing rather than guessing.
            if (auto policy = model::rollout_policy_of(shim.object); !policy) {
                spec = std::unexpected(std::move(policy).error());
            }
        }
        if (!spec) {
            // Stops the whole load (see above); every invalid one is named on the Node.
            shim.invalid = spec.error().message();
            if (!first_invalid) {
                first_invalid = std::move(spec.error());
            }
            continue;
        }
        out.origins.push_back(spec->location.to_string());
        out.shims.push_back(std::move(*spec));
    }
    m_last = std::move(reading);
    if (first_invalid) {
        return std::unexpected(std::move(*first_invalid));
    }
    return out;
}

} // namespace shimkeeper::cluster::agent
