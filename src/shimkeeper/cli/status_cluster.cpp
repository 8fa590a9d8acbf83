#include "shimkeeper/cli/status_cluster.hpp"

#include "shimkeeper/cluster/agent/slot_board_reader.hpp"
#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/client.hpp"

#include <iostream>

namespace shimkeeper::cli {

namespace {

using nlohmann::json;

// Why a Shim selects this node or not, in the words of its nodeSelector.
std::string selection_reason(const cluster::agent::ShimSeen& shim) {
    const json selector = shim.object.value(json::json_pointer("/spec/nodeSelector"), json());
    if (!selector.is_object() || selector.empty()) {
        return shim.selects ? "no nodeSelector: every node but the control plane"
                            : "no nodeSelector, and this is a control-plane node";
    }
    std::string text;
    for (const auto& [key, value] : selector.items()) {
        text += (text.empty() ? "" : ",") + key + "=" +
                (value.is_string() ? value.get<std::string>() : value.dump());
    }
    return "nodeSelector " + text + (shim.selects ? " matches" : " does not match");
}

// The rollout of a Shim as the slot Leases show it (none read: no slots known, `unread` says
// why), and what this node's Node says it asks for (`request`, none when it asks nothing).
json rollout_json(const cluster::agent::ShimSeen& shim,
                  const std::vector<cluster::model::SlotSeen>* slots, const std::string& unread,
                  const cluster::model::SlotRequest* request) {
    auto policy = cluster::model::rollout_policy_of(shim.object);
    if (!policy) {
        return {{"error", policy.error().message()}};
    }
    if (!policy->rolling) {
        return {{"strategy", "recreate"}};
    }
    json out{{"strategy", "rolling"}};
    const auto count = cluster::model::slots_for_node(*policy, shim.object);
    if (count) {
        out["slots"] = *count;
    }
    if (request != nullptr && request->generation == shim.generation) {
        out["requested_since"] = request->since;
        if (!request->refused.empty()) {
            out["refused"] = request->refused;
        }
    }
    if (slots == nullptr) {
        if (!unread.empty()) {
            out["slots_unread"] = unread;
        }
        return out;
    }
    const cluster::model::RolloutTarget target{
        shim.name, shim.object.value(json::json_pointer("/metadata/uid"), std::string()),
        shim.generation, count.value_or(1)};
    json holders = json::array();
    for (const cluster::model::SlotSeen& slot : *slots) {
        const cluster::model::SlotLease& lease = slot.lease;
        if (lease.shim != shim.name || lease.uid != target.uid || lease.holder.empty()) {
            continue;
        }
        json holder{{"slot", lease.name}, {"node", lease.holder}, {"generation", lease.generation}};
        if (!lease.failed.empty()) {
            holder["failed"] = lease.failed;
        }
        holders.push_back(std::move(holder));
    }
    out["holders"] = std::move(holders);
    if (const cluster::model::SlotSeen* failed = cluster::model::failed_slot(*slots, target)) {
        out["halted"] = cluster::model::halt_message(failed->lease);
    }
    return out;
}

// The slot Leases, when the API server answers and lets this credential read them; why not
// otherwise (status still works).
util::Expected<std::vector<cluster::model::SlotSeen>>
read_slots(const cluster::agent::ClusterSource& source) {
    auto client = TRY(source.client());
    auto board = TRY(cluster::agent::read_slot_board(client, source.settings().namespace_name));
    return board.slots();
}

void print_rollout(const json& rollout) {
    std::cout << "    rollout: ";
    if (rollout.contains("error")) {
        std::cout << rollout["error"].get<std::string>() << "\n";
        return;
    }
    std::cout << rollout["strategy"].get<std::string>();
    if (rollout.contains("slots")) {
        std::cout << ", " << rollout["slots"].get<int>() << " slot(s)";
    }
    if (rollout.contains("requested_since")) {
        std::cout << "; this node asks for a slot since "
                  << rollout["requested_since"].get<std::string>();
    }
    if (rollout.contains("holders")) {
        std::string names;
        for (const auto& holder : rollout["holders"]) {
            names += (names.empty() ? "" : ", ") + holder["node"].get<std::string>() +
                     (holder.contains("failed") ? " (failed)" : "");
        }
        std::cout << "; held by " << (names.empty() ? "nobody" : names);
    }
    std::cout << "\n";
    if (rollout.contains("refused")) {
        std::cout << "    REFUSED: the API server refuses this node "
                  << rollout["refused"].get<std::string>() << "\n";
    }
    if (rollout.contains("slots_unread")) {
        std::cout << "    slot Leases not read: " << rollout["slots_unread"].get<std::string>()
                  << "\n";
    }
    if (rollout.contains("halted")) {
        std::cout << "    HALTED: " << rollout["halted"].get<std::string>() << "\n";
    }
}

} // namespace

json cluster_connection_json(const cluster::agent::ClusterReading& reading) {
    json out{{"reachable", reading.live}, {"read_at", reading.view.read_at}};
    if (!reading.live) {
        out["unreachable_since"] = reading.view.unreachable_since;
        out["error"] = reading.problem;
        out["outage"] = reading.outage();
    }
    if (reading.refused) {
        out["credentials_refused_since"] = reading.view.refused_since;
        out["renew"] = reading.renew;
    }
    return out;
}

json cluster_status_json(Context& ctx, const util::Expected<spec::DesiredShims>& loaded) {
    if (!ctx.cluster) {
        return nullptr;
    }
    ctx.cluster->identify_once();
    const cluster::agent::ClusterSource& source = *ctx.cluster;
    json out{{"node", source.node_name()},
             {"node_from", source.node_name_origin()},
             {"kubeconfig", source.kubeconfig()}};
    if (source.node_name().empty()) {
        out["identity_problem"] = source.identity_problem();
    }
    const auto& reading = source.last_reading();
    if (!reading) {
        // Nothing read: the error is the desired state's (a refusal, or no memory yet).
        out["reachable"] = false;
        out["error"] = loaded ? std::string("not read") : loaded.error().message();
        return out;
    }
    out.update(cluster_connection_json(*reading));
    const cluster::model::NodeShimKeys keys = cluster::model::shim_keys_of(reading->view.node);
    std::optional<std::vector<cluster::model::SlotSeen>> slots;
    std::string unread;
    if (reading->live) {
        auto read = read_slots(source);
        if (read) {
            slots = std::move(*read);
        } else {
            unread = read.error().message();
        }
    }
    const cluster::model::SlotRequests requests =
        cluster::model::slot_requests_of(keys.slot_requests);
    json shims = json::array();
    for (const auto& shim : reading->shims) {
        json entry{{"name", shim.name},
                   {"generation", shim.generation},
                   {"selects", shim.selects},
                   {"why", selection_reason(shim)},
                   {"deleting", shim.deleting}};
        if (!shim.invalid.empty()) {
            entry["invalid"] = shim.invalid;
        }
        if (auto said = keys.annotations.find(shim.name); said != keys.annotations.end()) {
            if (auto state = cluster::model::node_shim_state_of(said->second)) {
                entry["node_says"] = cluster::model::to_json(*state);
            }
        }
        entry["labelled"] = keys.labels.contains(shim.name);
        if (auto label = keys.labels.find(shim.name); label != keys.labels.end()) {
            entry["label"] = label->second; // the handler this node is selected for
        }
        if (shim.selects || keys.annotations.contains(shim.name)) {
            const auto request = requests.find(shim.name);
            entry["rollout"] = rollout_json(shim, slots ? &*slots : nullptr, unread,
                                            request == requests.end() ? nullptr : &request->second);
        }
        shims.push_back(std::move(entry));
    }
    out["shims"] = std::move(shims);
    return out;
}

void print_cluster_status(const json& cluster) {
    if (cluster.is_null()) {
        return;
    }
    if (cluster.contains("identity_problem")) {
        std::cout << "Cluster: no node identity: " << cluster["identity_problem"].get<std::string>()
                  << "\n";
    } else {
        std::cout << "Cluster: node " << cluster["node"].get<std::string>() << " (from "
                  << cluster["node_from"].get<std::string>() << ")\n";
    }
    if (!cluster.contains("shims")) {
        std::cout << "  API server unreachable or refusing: " << cluster["error"].get<std::string>()
                  << " (the node is kept as it is)\n";
        return;
    }
    if (cluster["reachable"].get<bool>()) {
        std::cout << "  connected\n";
    } else if (cluster.contains("credentials_refused_since")) {
        std::cout << "  credentials refused since "
                  << cluster["credentials_refused_since"].get<std::string>() << ": "
                  << cluster["error"].get<std::string>() << "\n  renew "
                  << cluster["renew"].get<std::string>() << "; keeping the Shims read at "
                  << cluster["read_at"].get<std::string>() << "\n";
    } else {
        std::cout << "  unreachable since " << cluster["unreachable_since"].get<std::string>()
                  << ", the API server not answering: " << cluster["error"].get<std::string>()
                  << "\n  keeping the Shims read at " << cluster["read_at"].get<std::string>()
                  << "\n";
    }
    for (const auto& shim : cluster["shims"]) {
        std::cout << "  Shim/" << shim["name"].get<std::string>() << " (generation "
                  << shim["generation"].get<long>()
                  << "): " << (shim["selects"].get<bool>() ? "selects" : "does not select")
                  << " this node, " << shim["why"].get<std::string>();
        if (shim["deleting"].get<bool>()) {
            std::cout << "; being deleted";
        }
        if (shim.contains("invalid")) {
            std::cout << "; invalid: " << shim["invalid"].get<std::string>();
        }
        if (shim.contains("node_says")) {
            const auto& said = shim["node_says"];
            std::cout << "; Node says " << said["state"].get<std::string>() << " at generation "
                      << said["generation"].get<long>()
                      << (shim.contains("label") ? ", labelled " + shim["label"].get<std::string>()
                                                 : std::string(", not labelled"));
            if (said.contains("reason")) {
                std::cout << " (" << said["reason"].get<std::string>() << ")";
            }
        }
        std::cout << "\n";
        if (shim.contains("rollout")) {
            print_rollout(shim["rollout"]);
        }
    }
}

} // namespace shimkeeper::cli
