// Sends what a node says about its cluster shims (node_state.hpp) to its own Node: one merge
// patch when something differs, none otherwise, with the node's credential (NodeRestriction or
// deploy/'s admission policies keep it to this Node and shimkeeper's keys). A shim newly failed
// or in conflict, or whose removal newly waits for pods (`RemovalBlocked`), also gets Warning
// Events on the Shim and on the Node, once per new reason, not per retry.
#pragma once

#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/slot_hold.hpp"
#include "shimkeeper/kubeapi/event_recorder.hpp"
#include "shimkeeper/util/log.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::cluster::agent {

struct NodeReport {
    std::map<std::string, model::NodeShimState> wanted; // shim name -> state the Node should say
    std::vector<std::string> forget;                    // shims the Node should say nothing about
    std::set<std::string> blocked; // `removing` shims whose removal waits for pods using them
    // The slots this node waits for (slot_grant.hpp); nullopt leaves the Node's requests as
    // they are (`apply` asks for none: nobody would take a grant after it exits).
    std::optional<model::SlotRequests> requests;
    // Rollout slots released with this report (their entries marked done, rollout_gate.hpp): one
    // write of the Node says the outcome and frees the slots. A report with releases is always
    // written.
    std::vector<model::SlotHold> releases;
    // Rollout slots renewed with this report, each with its committing mark (rollout_gate.hpp):
    // the report before the change and the node's mark that it is past its point of no return
    // in one write. A report with such entries is always written.
    std::vector<model::SlotHold> committing;
};

class NodeReporter {
public:
    // `reading`: what this reconcile read (its Node is where the current keys come from).
    NodeReporter(const ClusterSource& source, const ClusterReading& reading, const util::Log& log);

    // Patches the Node when `report` differs from what it carries. The error names the Node and
    // the API's answer (a 403 from NodeRestriction or the admission policy included).
    util::Expected<void> publish(const NodeReport& report);

private:
    void warn_about_new_failures(const NodeReport& report);
    // The Shims a report's patch writes about, as Event subjects.
    std::vector<kubeapi::ObjectReference> shims_reported(const NodeReport& report) const;
    // Shim `shim` as an Event's subject: the object read, or its name and `uid`.
    kubeapi::ObjectReference reference_of(const std::string& shim, const std::string& uid) const;

    const ClusterSource& m_source;
    const ClusterReading& m_reading;
    const util::Log& m_log;
    model::NodeShimKeys m_keys; // what the Node carries, updated by each patch's answer
};

} // namespace shimkeeper::cluster::agent
