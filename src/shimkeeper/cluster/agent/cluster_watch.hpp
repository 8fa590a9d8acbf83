// The daemon's two watches in cluster mode (CLUSTER.md, "Node worker"): every Shim, and this
// node's own Node (fieldSelector metadata.name=<node>, all the Node authorizer lets a node
// credential watch). They hold the current objects, so a reconcile reads them without a request
// (a ClusterFeed for ClusterSource), and they say when something that decides the desired state
// changed: a Shim appearing, going, being deleted or getting a new spec (metadata.generation; a
// status write by the coordinator is not a change unless it resolves a new slot count), or the
// Node's labels or machineID. The
// node's own writes to its shimkeeper keys are not changes either, so a report never wakes the
// reconcile it came from.
//
// Idle cost: two open watches, bookmarks, and a re-watch every few minutes (watch_state.hpp).
#pragma once

#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/kubeapi/curl_event_loop.hpp"
#include "shimkeeper/kubeapi/watch.hpp"
#include "shimkeeper/util/log.hpp"

#include <map>
#include <memory>
#include <string>

namespace shimkeeper::cluster::agent {

// What of a Shim wakes the node's reconcile when it changes: which object it is, its generation,
// its deletion, and the slot count this node would read from it (a percentage resolved by the
// coordinator's status for the Shim's generation). Nothing else of the status: the coordinator
// writes it after every apply, and each write would wake every agent for nothing.
nlohmann::json shim_fingerprint(const nlohmann::json& shim);

class ClusterWatch : public ClusterFeed {
public:
    // Reads the kubeconfigs of `source`, whose node name is decided (an Error with its identity
    // problem otherwise); the watches start with start(). A watch that has to
    // list again (410 Gone after a compaction or an API server restart) says so on `log`.
    static util::Expected<std::unique_ptr<ClusterWatch>>
    create(kubeapi::CurlEventLoop& loop, const ClusterSource& source, util::Log log);
    ClusterWatch(const ClusterWatch&) = delete;
    ClusterWatch& operator=(const ClusterWatch&) = delete;

    util::Expected<void> start();

    // Both watches synced and neither failing now: what they hold is the cluster.
    std::optional<ClusterSnapshot> current() const override;
    // The Shim as last seen (trimmed), without copying the snapshot; nullptr when not seen.
    const nlohmann::json* shim(const std::string& name) const;
    // This node's Node as last seen, without copying the snapshot; nullptr until its watch synced.
    const nlohmann::json* node() const { return m_node_synced ? &m_node : nullptr; }
    // True once after each change that may change the desired state.
    bool take_changed();
    // Why the watches are not current, for logs and status ("" when they are).
    std::string problem() const;

private:
    ClusterWatch(kubeapi::CurlEventLoop& loop, kubeapi::Client agent, kubeapi::Client node,
                 std::string node_name, util::Log log)
        : m_loop(loop), m_agent(std::move(agent)), m_node_client(std::move(node)),
          m_node_name(std::move(node_name)), m_log(log) {}
    void note_relist(const std::string& what, const kubeapi::Watch& watch) const;

    void on_shim(const kubeapi::WatchEvent& event);
    void on_node(const kubeapi::WatchEvent& event);
    void note_fingerprint();

    kubeapi::CurlEventLoop& m_loop;
    kubeapi::Client m_agent;
    kubeapi::Client m_node_client;
    std::string m_node_name;
    util::Log m_log;
    std::unique_ptr<kubeapi::Watch> m_shim_watch;
    std::unique_ptr<kubeapi::Watch> m_node_watch;

    std::map<std::string, nlohmann::json> m_shims; // by name
    nlohmann::json m_node;
    bool m_shims_synced = false;
    bool m_node_synced = false;
    std::string m_fingerprint; // of what decides the desired state
    bool m_changed = false;
};

} // namespace shimkeeper::cluster::agent
