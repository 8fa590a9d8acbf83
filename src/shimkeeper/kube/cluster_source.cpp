#include "shimkeeper/kube/cluster_source.hpp"

#include "shimkeeper/kube/certificate_identity.hpp"
#include "shimkeeper/kube/client.hpp"
#include "shimkeeper/kube/node_state.hpp"
#include "shimkeeper/kube/resource.hpp"
#include "shimkeeper/kube/rollout_policy.hpp"
#include "shimkeeper/kube/shim_object.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <algorithm>
#include <cctype>
#include <unistd.h>

namespace shimkeeper::kube {

namespace {

using nlohmann::json;

std::string trim(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.pop_back();
    }
    return text;
}

std::vector<ShimSeen> shims_on_node(const ClusterSnapshot& view) {
    const auto labels = metadata_strings(view.node, "labels");
    std::vector<ShimSeen> out;
    for (const json& shim : view.shims) {
        const json& metadata = shim.contains("metadata") ? shim["metadata"] : json::object();
        ShimSeen entry;
        entry.name = metadata.value("name", std::string("?"));
        entry.generation = metadata.value("generation", 0L);
        entry.deleting = metadata.contains("deletionTimestamp");
        entry.selects = selects_node(shim, labels);
        entry.object = shim;
        out.push_back(std::move(entry));
    }
    return out;
}

std::string host_name() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string name(host);
    std::ranges::transform(name, name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
}

// The node name a kubeconfig's client certificate speaks for; a kubeconfig that cannot be read
// gives none here and its own clear error when the Node is read with it.
std::optional<std::string> certificate_node_name(const std::string& kubeconfig) {
    auto config = load_kubeconfig(kubeconfig);
    return config ? node_name_of_certificate(config->client_certificate) : std::nullopt;
}

} // namespace

const ShimSeen* ClusterReading::find(std::string_view name) const {
    auto found = std::ranges::find(shims, name, &ShimSeen::name);
    return found == shims.end() ? nullptr : &*found;
}

ClusterSource::ClusterSource(spec::KubeSettings settings, std::string arch, ClusterPlaces places)
    : m_settings(std::move(settings)), m_arch(std::move(arch)), m_places(std::move(places)) {
    if (!m_settings.node_kubeconfig) {
        for (const auto& candidate : m_places.kubelet_kubeconfigs) {
            std::error_code ec;
            if (std::filesystem::is_regular_file(candidate, ec)) {
                m_settings.node_kubeconfig = candidate.string();
                break;
            }
        }
    }
    if (m_settings.node_name) {
        m_node_name = *m_settings.node_name;
        m_node_name_origin = "[kube] node_name";
    } else if (auto named = certificate_node_name(node_kubeconfig())) {
        m_node_name = std::move(*named);
        m_node_name_origin = "the client certificate of " + node_kubeconfig();
    } else {
        m_node_name = host_name();
        m_node_name_origin = "the hostname";
    }
}

const std::string& ClusterSource::agent_kubeconfig() const {
    return m_settings.kubeconfig ? *m_settings.kubeconfig : *m_settings.node_kubeconfig;
}

const std::string& ClusterSource::node_kubeconfig() const {
    return m_settings.node_kubeconfig ? *m_settings.node_kubeconfig : agent_kubeconfig();
}

util::Expected<ClusterSnapshot> ClusterSource::read_live() const {
    if (m_feed != nullptr) {
        if (auto fed = m_feed->current()) {
            return *fed;
        }
    }
    const std::string node = node_name();
    Client node_client = TRY(Client::from_kubeconfig(node_kubeconfig()));
    auto node_object = node_client.get(nodes_resource(), "", node);
    if (!node_object) {
        return std::unexpected(std::move(node_object.error())
                                   .with_context("reading this node's Node " + node +
                                                 " (set [kube] node_name if it is not " + node +
                                                 ")"));
    }
    Client agent = TRY(Client::from_kubeconfig(agent_kubeconfig()));
    auto shims = agent.list(shims_resource(), "");
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
                          ": refusing to act for another machine's Node; set [kube] node_name "
                          "to this host's Node");
}

util::Expected<ClusterReading> ClusterSource::read() const {
    const ClusterMemory memory(m_places.memory_file);
    auto remembered = memory.load();
    auto live = read_live();
    ClusterReading reading;
    if (live) {
        TRY(check_machine(*live)); // before it is remembered: nothing is kept for a wrong Node
        live->read_at = util::now_rfc3339();
        const bool same = remembered && *remembered && (*remembered)->same_objects(*live) &&
                          (*remembered)->unreachable_since.empty();
        if (same) {
            live->read_at = (*remembered)->read_at; // unchanged: no write
        } else if (m_remember) {
            TRY(memory.save(*live));
        }
        reading.view = std::move(*live);
    } else {
        // Only an API server that does not answer falls back; a refusal (403, a missing Node)
        // is a mistake to fix, not an outage to ride out.
        if (live.error().code() != util::ErrorCode::network) {
            return std::unexpected(std::move(live.error()));
        }
        if (!remembered) {
            return std::unexpected(std::move(remembered.error()));
        }
        if (!*remembered) {
            return std::unexpected(
                std::move(live.error())
                    .with_context("the API server did not answer and this node has not read the "
                                  "cluster before, so its Shims are unknown"));
        }
        reading.view = std::move(**remembered);
        reading.live = false;
        reading.problem = live.error().message();
        if (reading.view.unreachable_since.empty()) {
            reading.view.unreachable_since = util::now_rfc3339();
            if (m_remember) {
                TRY(memory.save(reading.view));
            }
        }
    }
    if (!reading.live) {
        TRY(check_machine(reading.view));
    }
    reading.shims = shims_on_node(reading.view);
    return reading;
}

util::Expected<spec::DesiredShims> ClusterSource::load() const {
    m_last.reset();
    ClusterReading reading = TRY(read());
    spec::DesiredShims out;
    if (!reading.live) {
        out.warnings.push_back("cluster: unreachable since " + reading.view.unreachable_since +
                               " (" + reading.problem + "): keeping the Shims read at " +
                               reading.view.read_at);
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
        auto spec = shim_spec_of(shim.object, m_arch);
        if (spec) {
            // The rollout strategy decides when this node may change: one it cannot read
            // stops the node from changing rather than guessing.
            if (auto policy = rollout_policy_of(shim.object); !policy) {
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

} // namespace shimkeeper::kube
