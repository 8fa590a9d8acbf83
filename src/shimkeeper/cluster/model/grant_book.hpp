// What one coordinator term remembers of the rollout slots it granted, between its passes, apart
// from what its watches hold (a new term starts with an empty book: coordinator.cpp):
//   - pending: grants made whose Lease the watch has not shown yet. A pass must not grant their
//     name or their node again; a grant counts as pending until the watch delivered any event of
//     its name since it was made (our create at least: it may be gone again already, taken and
//     released between two passes), or, should the watch lag, for slot_timing::free_after;
//   - granted: every grant until its slot goes; then its request is served (declined, below);
//   - declined: requests served, not granted again while the node still says them
//     (slot_grant.hpp); forgotten once the node no longer says that request;
//   - grants seen: each grant id and its holder as the slot watch showed them, and the failures
//     recorded on them this term (failures_to_record in slot_view.hpp).
// Pure: every time comes in as a parameter.
#pragma once

#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_lease.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

// How many events the slot watch delivered of each Lease name (SlotBoard::events()).
using SlotEventCounts = std::map<std::string, std::uint64_t>;

class GrantBook {
public:
    using Clock = std::chrono::steady_clock;

    // The slot Leases as the watch shows them: the live grants' uids and holders are remembered
    // for the term (a node may halt a rollout only with a failure of a grant it had).
    void note_slots_seen(const std::vector<SlotSeen>& slots);

    // Before a grant step decides: forgets the pending grants the watch has shown (or that are
    // older than free_after), moves the grants whose slot went (not held by their node in `live`,
    // the slots minus those this pass freed) to the served requests, and forgets a served
    // request its node no longer says (`requests`).
    void settle(const std::vector<SlotSeen>& live, const SlotEventCounts& events,
                const std::map<std::string, SlotRequests>& requests, Clock::time_point now);

    // A grant just created for `request`; `events` are its Lease name's events so far.
    void record_grant(const SlotGrant& grant, const SlotRequest& request,
                      const SlotEventCounts& events, Clock::time_point now);
    void record_failure(const std::string& key) { m_failures_recorded.insert(key); }

    std::vector<SlotGrant> pending_grants() const;
    const std::vector<Declined>& served() const { return m_served; }
    const std::set<std::string>& failures_recorded() const { return m_failures_recorded; }
    const std::map<std::string, std::string>& grants_seen() const { return m_grants_seen; }
    // When the oldest pending grant stops counting as made: a pass is due then.
    std::optional<Clock::time_point> next_pending_expiry() const;

private:
    struct Pending {
        SlotGrant grant;
        Clock::time_point at;
        std::uint64_t events = 0; // of its Lease name when it was made
    };
    std::vector<Pending> m_pending;
    Grants m_granted;                                 // by Lease name, until the slot goes
    std::vector<Declined> m_served;                   // requests whose slot went
    std::set<std::string> m_failures_recorded;        // failure_key
    std::map<std::string, std::string> m_grants_seen; // grant id -> holder
};

} // namespace shimkeeper::cluster::model
