// What the node agent watches in cluster mode (`shimkeeper run`): one curl-multi loop on its own
// sd_event carrying the node's watches (Shims, its own Node, and the rollout slot Leases granted
// to it: nothing about other nodes). The daemon plugs the loop's
// fd into its own loop as a change source. Agents do not coordinate: the cluster-wide work is
// `shimkeeper coordinate`'s, under an identity of its own. [kube] is read once, at start: a
// changed kubeconfig path takes `systemctl restart shimkeeper` (files in shims.d/ are still
// picked up live).
#pragma once

#include "shimkeeper/cluster/agent/cluster_watch.hpp"
#include "shimkeeper/cluster/agent/rollout_gate.hpp"
#include "shimkeeper/cluster/model/slot_board.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/curl_event_loop.hpp"
#include "shimkeeper/kubeapi/watch.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace shimkeeper::cluster::agent {

// How long the slot watch stays open after the node stopped needing it: a node that asks again at
// once (its next reconcile, a new generation) keeps it rather than listing anew. A grant that
// comes later for a request dropped meanwhile is freed by the coordinator (never taken).
inline constexpr std::chrono::seconds k_slot_watch_grace{5};

// The daemon's quiet time after a change these watches saw, in place of the files' 500 ms: the
// events of one `kubectl apply` (its documents, one request each) come within a few tens of
// milliseconds, and every agent waiting longer delays each rollout's start by as much.
// What wakes the daemon at all is narrow (cluster_watch.cpp: a Shim generation, not its status).
inline constexpr std::chrono::milliseconds k_cluster_debounce{100};

class AgentWatches {
public:
    // Decides the node name of `source` unless it is decided already (one request), then opens
    // the watches for that Node. An Error when they cannot be set up at all.
    static util::Expected<std::unique_ptr<AgentWatches>> start(ClusterSource& source,
                                                               const util::Log& log);

    ~AgentWatches();
    AgentWatches(const AgentWatches&) = delete;
    AgentWatches& operator=(const AgentWatches&) = delete;

    // Readable when something is due: then dispatch().
    int fd() const { return m_loop->fd(); }
    // Runs what is due; true when the desired state may have changed or a slot was granted (the
    // daemon should reconcile).
    bool dispatch();
    // True once after a slot was granted (or one of ours is to be written again): the reconcile
    // should start now, not after the daemon's debounce. Not while another Shim this node asked
    // for is still ungranted: the coordinator grants a node's requests in one go, a create each,
    // so the rest are likely on their way, and the short debounce (k_cluster_debounce) lets one
    // transaction, and one containerd restart, carry them all.
    bool take_urgent();
    const ClusterFeed* feed() const { return m_watch.get(); }
    // The Node the watches were set up for, and where that name came from.
    const std::string& node_name() const { return m_node_name; }
    const std::string& node_name_origin() const { return m_node_name_origin; }
    // The rollout slots granted to this node, as the Lease watch holds them; not synced while
    // that watch is closed (nothing waited for or held) or starting.
    const model::SlotBoard& slots() const { return m_slots; }
    // The Shims the last reconcile could not take a slot for (rollout_gate.hpp). This node asks
    // the coordinator for them (requests(), sent with the Node report) and claims a slot the
    // coordinator grants as soon as its Lease reaches this node's watch, without a request (the
    // reconcile takes it with its `installing` report), waking the daemon at once (take_urgent).
    // `held`: Shims the reconcile held a slot for; waiting for one of them again is a new
    // request (the coordinator does not grant a request again once its slot went).
    void wait_for(std::map<std::string, std::optional<model::RolloutTarget>> shims,
                  const std::set<std::string>& held = {});
    // What this node asks for, for the Node report: each waited-for Shim generation, with when
    // this daemon first asked (a daemon started again asks anew, slot_grant.hpp).
    model::SlotRequests requests();
    // The slots claimed that way since the last call, for the reconcile's RolloutGate.
    ClaimedSlots take_claimed() { return std::exchange(m_claimed, {}); }

private:
    AgentWatches(std::unique_ptr<kubeapi::CurlEventLoop> loop, const util::Log& log)
        : m_loop(std::move(loop)), m_log(log) {}

    std::unique_ptr<kubeapi::CurlEventLoop> m_loop;
    std::unique_ptr<ClusterWatch> m_watch;
    std::unique_ptr<kubeapi::Client> m_lease_client;
    model::SlotBoard m_slots; // fed by m_lease_watch: this node's slots
    std::unique_ptr<kubeapi::Watch> m_lease_watch;
    const util::Log& m_log;
    std::string m_last_problem;
    std::map<std::string, std::optional<model::RolloutTarget>> m_waiting;
    model::SlotRequests m_asked_since; // by Shim: what was asked, and since when
    std::string m_node_name;
    std::string m_node_name_origin;
    std::string m_namespace;
    ClaimedSlots m_claimed;
    // When the loop last dispatched what the watches had read: the age of m_slots' view.
    std::chrono::steady_clock::time_point m_slots_dispatched = std::chrono::steady_clock::now();
    bool m_wake_now = false;

    void on_slot_change(const std::string& shim);
    void note_slot_watch_refusal();
    // Adopts the slots granted for what waits (SlotKeeper::adopt, no request), between or at the
    // end of reconciles; the reconcile it wakes takes them with its `installing` report.
    void claim_granted_slots();
    // The slot watch is open only while this node waits for a slot, holds one or has one
    // granted: an idle agent keeps two watches (Shims, its Node), not three. It is
    // opened at start (a slot held from before a restart), and closed k_slot_watch_grace after
    // it went idle.
    util::Expected<void> open_slot_watch();
    bool waits_for_a_slot() const;
    bool slot_watch_idle() const;
    void close_slot_watch_when_idle();
    kubeapi::SdSource m_close_timer;
    bool m_close_armed = false;
};

} // namespace shimkeeper::cluster::agent
