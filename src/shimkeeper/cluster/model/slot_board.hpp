// The rollout slot Leases as a watch delivers them: the coordinator's watch on the agent
// namespace's Leases (all slots, and its election Lease), or an agent's on the slots granted to
// it (slot_grant.hpp). Each version of a Lease is stamped with when it was first seen here, the
// `now` of this machine's monotonic clock its caller passes in (expiry is judged on this clock,
// never the writer's).
//
// Without a watch (`shimkeeper apply`, `status`), `from_list` builds a board from one list
// (agent/slot_board_reader.hpp), every Lease stamped as seen now. Never from its renewTime: that is
// the writer's clock, and a host 20 s ahead would judge a live slot expired. Nothing on a node
// judges expiry anyway (a node only creates absent slots; the coordinator frees expired ones by its
// own watch), so a listed board's clocks only start running.
#pragma once

#include "shimkeeper/cluster/model/slot_lease.hpp"
#include "shimkeeper/kubeapi/watch_state.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

class SlotBoard {
public:
    // A slot Lease of `shim` appeared, changed or went; `may_free`: it went or was released, so
    // a waiting node may now take it (a slot taken or renewed frees nothing).
    using Listener = std::function<void(const std::string& shim, bool may_free)>;

    static SlotBoard from_list(const std::vector<nlohmann::json>& leases,
                               std::chrono::steady_clock::time_point now);

    // A watch event on the namespace's Leases (not slot Leases are ignored), seen `now`.
    void apply(const kubeapi::WatchEvent& event, std::chrono::steady_clock::time_point now);
    bool synced() const { return m_synced; }
    // What the API server refuses that the board needs (its watch answered 401 or 403: the
    // request and the server's message), empty when nothing is refused. The watch's owner says.
    const std::string& refused() const { return m_refused; }
    void set_refused(std::string refused) { m_refused = std::move(refused); }

    // Ordered by Lease name. A reference, not a copy: every watch event reads it, and copying a
    // board of tens of slots per event costs a waiting agent a sizeable share of its CPU.
    const std::vector<SlotSeen>& slots() const { return m_slots; }
    void set_listener(Listener listener) { m_listener = std::move(listener); }
    // How many watch events (added, modified, deleted, relisted) each Lease name has had: a
    // count that grew since a write says the watch has delivered that write, even when the
    // Lease is already gone again.
    const std::map<std::string, std::uint64_t>& events() const { return m_events; }

private:
    void put(const nlohmann::json& lease, std::chrono::steady_clock::time_point seen);
    std::vector<SlotSeen>::iterator find(const std::string& name);

    std::vector<SlotSeen> m_slots; // ordered by Lease name
    std::map<std::string, std::uint64_t> m_events;
    bool m_synced = false;
    std::string m_refused;
    Listener m_listener;
};

} // namespace shimkeeper::cluster::model
