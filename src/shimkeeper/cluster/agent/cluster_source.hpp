// Cluster mode's desired-state source: the Shim objects that select this node. The node's own
// Node is read for its labels and every Shim, both with the node's one credential; each
// selecting Shim becomes a ShimSpec through shim_object.hpp. A Shim being deleted is left out (so
// the node uninstalls it); one that clashes with a file in shims.d/ yields to the file
// (spec::gather).
//
// What may change the node, and what may not:
//   - a selecting Shim that does not validate is an error: the node stays as it is, rather than
//     uninstalling what an earlier, valid version of it installed;
//   - an API server that does not answer (a transport failure, a request past its bound, a 5xx)
//     or that refuses the credential (401, 403: a token expired or revoked): the last reading
//     kept in the store (cluster_memory.hpp) stands in, with a warning saying since when (and,
//     for a refusal, which file to renew), so files still apply and no cluster shim is removed;
//     with no reading kept yet, an error (the rules: cluster_outage.hpp);
//   - a Node whose status.nodeInfo.machineID is not this host's /etc/machine-id: an error (the
//     agent was given another machine's node name).
#pragma once

#include "shimkeeper/cluster/agent/cluster_memory.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/sources.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::cluster::agent {

// One Shim as this node sees it.
struct ShimSeen {
    std::string name;
    long generation = 0; // metadata.generation: what the node reports it reached
    nlohmann::json object;
    bool selects = false;  // its nodeSelector matches this Node's labels
    bool deleting = false; // metadata.deletionTimestamp is set
    std::string invalid;   // a selecting Shim that does not validate: why
};

struct ClusterReading {
    ClusterSnapshot view;
    bool live = true;     // false: the API server did not answer or refused; `view` is the last
                          // reading
    bool refused = false; // not live because the credential was refused (401, 403)
    std::string problem;  // why not live
    std::string renew;    // refused: the credential's file to renew

    // Not live: since when and why, one line ("unreachable since ...", "credentials refused
    // since ... renew FILE"), for the log and status.
    std::string outage() const;
    std::vector<ShimSeen> shims;

    // The Shim of that name, nullptr when the reading has none.
    const ShimSeen* find(std::string_view name) const;
};

// Where a reading comes from when the daemon's watches already hold it (cluster_watch.hpp):
// no request at all. nullopt: not synced, read through REST.
class ClusterFeed {
public:
    virtual ~ClusterFeed() = default;
    virtual std::optional<ClusterSnapshot> current() const = 0;
};

struct ClusterPlaces {
    std::filesystem::path memory_file; // <store>/state/cluster.json
    std::filesystem::path machine_id;  // <root>/etc/machine-id
    // Where a kubelet keeps its kubeconfig (host paths, first found wins): the node credential
    // when [kube] kubeconfig is not set.
    std::vector<std::filesystem::path> kubelet_kubeconfigs;
};

class ClusterSource : public spec::DesiredSource {
public:
    ClusterSource(spec::KubeSettings settings, std::string arch, ClusterPlaces places);

    // Reads the cluster (read()) and keeps the reading for last_reading().
    util::Expected<spec::DesiredShims> load() override;
    bool yields_on_conflict() const override { return true; }

    // Reads the cluster (or the feed, or the memory when the API server does not answer),
    // deciding the node name first if it is not yet, and keeps the reading in the memory when
    // remember_readings() said so.
    util::Expected<ClusterReading> read();
    // What the last load() read, for reporting on the Node; nullopt before or when it failed
    // before reading anything.
    const std::optional<ClusterReading>& last_reading() const { return m_last; }

    // After a pass (the daemon's reconcile, its report included): a request of the pass that got
    // no answer makes the reading not live and the memory say since when (kept from an earlier
    // pass); a pass whose requests were answered clears that. A reading from the watches alone
    // proves nothing either way; a pass that made no request while an outage is kept asks once.
    // Returns the outage to log, "" when none.
    util::Expected<std::string> settle_pass();

    // Commands that hold the node lock (apply, run) keep what they read in the store; plan and
    // status only read it.
    void remember_readings() { m_remember = true; }
    void set_feed(const ClusterFeed* feed) { m_feed = feed; }
    // Called before every request of this source's pass (the daemon's watchdog ping).
    void set_heartbeat(std::function<void()> heartbeat) {
        m_pass = std::make_shared<kubeapi::ApiPass>(std::move(heartbeat));
    }
    // This source's pass: the reconcile's, which the rollout slots' requests join too.
    const std::shared_ptr<kubeapi::ApiPass>& pass() const { return m_pass; }
    // A client for the node's credential in this source's pass (kubeapi/request_bound.hpp):
    // after the first request that got no answer, the others fail at once.
    util::Expected<kubeapi::Client> client() const;
    // The file to renew when the credential is refused: the kubeconfig's tokenFile, else its
    // client certificate's file, else the kubeconfig itself.
    std::string credential_file() const;

    const spec::KubeSettings& settings() const { return m_settings; }
    // [kube] kubeconfig, else the kubelet's when there is one ("" when neither).
    const std::string& kubeconfig() const { return m_kubeconfig; }
    // Decides the Node this agent acts for unless that is decided already: asks the API server
    // whose the credential is (one request). read() does it too, and asks again while undecided.
    void identify_once() {
        if (!m_identified) {
            identify();
        }
    }
    // The Node this agent acts for: the one its credential is confined to, as the API server
    // says (self_identity.hpp); [kube] node_name may only repeat it. While the API server does
    // not answer, the Node of the last reading kept, else [kube] node_name. "" until decided
    // (identify_once(), read(), assume_identity()), and with identity_problem() set when it
    // cannot be.
    const std::string& node_name() const { return m_node_name; }
    // Where node_name() came from, for status.
    const std::string& node_name_origin() const { return m_node_name_origin; }
    // Why there is no node name, or why the credential may not act for this node.
    const std::string& identity_problem() const { return m_identity_problem; }
    // The identity a long-lived caller already established (the daemon's watches, at start), so
    // that a reconcile does not ask the API server again; [kube] is read once per daemon start.
    void assume_identity(std::string node_name, std::string origin);
    const ClusterPlaces& places() const { return m_places; }

private:
    void identify();
    // from_feed: set when the watches answered, without a request.
    util::Expected<ClusterSnapshot> read_live(bool& from_feed) const;
    util::Expected<void> check_machine(const ClusterSnapshot& view) const;

    spec::KubeSettings m_settings;
    std::string m_kubeconfig;
    // Decided at the first identify_once() or read(); asked again by read() while undecided (the
    // API server was down).
    std::string m_node_name;
    std::string m_node_name_origin;
    std::string m_identity_problem;
    bool m_identified = false;
    std::string m_arch;
    ClusterPlaces m_places;
    const ClusterFeed* m_feed = nullptr;
    bool m_remember = false;
    std::shared_ptr<kubeapi::ApiPass> m_pass = std::make_shared<kubeapi::ApiPass>();
    std::optional<ClusterReading> m_last;
};

} // namespace shimkeeper::cluster::agent
