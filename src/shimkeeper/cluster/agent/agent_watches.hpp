// What the node agent watches in cluster mode (`shimkeeper run`): one curl-multi loop on its own
// sd_event carrying the node's watches (Shims, its own Node, the namespace's Leases for the
// rollout slots), and the timers that wake a node waiting for a slot. The daemon plugs the loop's
// fd into its own loop as a change source. Agents do not coordinate: the cluster-wide work is
// `shimkeeper coordinate`'s, under an identity of its own. [kube] is read once, at start: a
// changed kubeconfig path takes `systemctl restart shimkeeper` (files in shims.d/ are still
// picked up live).
#pragma once

#include "shimkeeper/cluster/agent/cluster_watch.hpp"
#include "shimkeeper/cluster/agent/rollout_gate.hpp"
#include "shimkeeper/cluster/model/slot_board.hpp"
#include "shimkeeper/kubeapi/curl_event_loop.hpp"
#include "shimkeeper/kubeapi/watch.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace shimkeeper::cluster::agent {

class AgentWatches {
public:
    // An Error when the watches cannot be set up at all.
    static util::Expected<std::unique_ptr<AgentWatches>> start(const ClusterSource& source,
                                                               const util::Log& log);

    ~AgentWatches();
    AgentWatches(const AgentWatches&) = delete;
    AgentWatches& operator=(const AgentWatches&) = delete;

    // Readable when something is due: then dispatch().
    int fd() const { return m_loop->fd(); }
    // Runs what is due; true when the desired state may have changed or a slot was taken (the
    // daemon should reconcile).
    bool dispatch();
    // True once after a slot was taken (or one of ours is to be written again): the reconcile
    // should start now, not after the daemon's debounce.
    bool take_urgent() { return std::exchange(m_wake_now, false); }
    const ClusterFeed* feed() const { return m_watch.get(); }
    // The Node the watches were set up for, and where that name came from.
    const std::string& node_name() const { return m_node_name; }
    const std::string& node_name_origin() const { return m_node_name_origin; }
    // The rollout slots as the Lease watch holds them.
    const model::SlotBoard& slots() const { return m_slots; }
    // The Shims the last reconcile could not take a slot for: one of their slots going or being
    // released sets a timer, a random delay that grows with the nodes still to go (so that of a
    // crowd of waiting nodes one tries first and the others see it take the slot; each slot
    // freed draws again and the earlier draw stands, so k free slots fill k times faster). A slot
    // whose holder died is freed by the coordinator (deleted), which is such an event.
    // When the timer fires and the board has a slot this node could take (decide_slot), the
    // slot is taken right there, one request, and only a node that got it wakes the daemon: a
    // node that lost the race, or saw the slot already taken, stays asleep, so waiting costs a
    // crowd no reconciles, and the slot is held before the reconcile starts.
    void wait_for(std::map<std::string, std::optional<model::RolloutTarget>> shims);
    // The slots taken that way since the last call, for the reconcile's RolloutGate.
    ClaimedSlots take_claimed() { return std::exchange(m_claimed, {}); }

private:
    AgentWatches(std::unique_ptr<kubeapi::CurlEventLoop> loop, const util::Log& log)
        : m_loop(std::move(loop)), m_log(log) {}

    std::unique_ptr<kubeapi::CurlEventLoop> m_loop;
    std::unique_ptr<ClusterWatch> m_watch;
    std::unique_ptr<kubeapi::Client> m_lease_client;
    std::unique_ptr<kubeapi::Client> m_slot_client; // a waiting node's tries: no 429 retries
    model::SlotBoard m_slots;                       // fed by m_lease_watch
    std::unique_ptr<kubeapi::Watch> m_lease_watch;
    const util::Log& m_log;
    std::string m_last_problem;
    std::map<std::string, std::optional<model::RolloutTarget>> m_waiting;
    std::string m_node_name;
    std::string m_node_name_origin;
    std::string m_namespace;
    ClaimedSlots m_claimed;
    kubeapi::SdSource m_wake_timer;
    bool m_wake_armed = false;
    int m_lost_races = 0; // in a row; widens the jitter
    std::chrono::steady_clock::time_point m_wake_due;
    bool m_wake_now = false;
    std::minstd_rand m_rng{std::random_device{}()};

    void on_slot_change(const std::string& shim, bool may_free);
    void arm_wake(std::chrono::milliseconds delay);
    void claim_free_slot();
    std::chrono::milliseconds wake_jitter_bound(const std::string& shim) const;
};

} // namespace shimkeeper::cluster::agent
