// The coordinator's view of the rollout slots (pure): each grant Lease joined with what its holder
// says of it on its own Node (slot_hold.hpp), timed on the coordinator's own clock.
//   - A grant whose holder's entry names it (by the grant's id) was taken: it is as fresh as the
//     later of the Lease's version and the entry's text, as the coordinator first saw each; the
//     entry's committing mark extends it (slot_lease.hpp); an entry that says done releases it.
//   - A grant whose holder's entry names another grant, or that has none, was not taken (yet):
//     only the Lease's own version times it.
//   - A failure in an entry becomes the grant's failed annotation, or a failed Lease of its own
//     when the grant is gone and the entry is new (failures_to_record).
// The text of an entry is all the coordinator compares: the times in it are the node's clock.
#pragma once

#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/slot_hold.hpp"
#include "shimkeeper/cluster/model/slot_lease.hpp"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

struct HoldSeen {
    SlotHold hold;
    std::chrono::steady_clock::time_point seen; // when the coordinator first saw this text
};
// node -> Shim -> the entry as last seen.
using HoldClock = std::map<std::string, std::map<std::string, HoldSeen>>;

// Takes in `node`'s entries as they are now: a new or changed one is stamped `now`, one gone is
// forgotten. True when an entry now says done or failed that did not before: a slot goes, or a
// rollout halts, and the coordinator acts at once.
bool stamp_holds(HoldClock& clock, const NodeView& node, std::chrono::steady_clock::time_point now);

// The entry that `holder` has for `lease`'s grant (same grant id), nullptr when it has none.
const HoldSeen* hold_of_grant(const HoldClock& clock, const SlotLease& lease);

// The slots as the coordinator judges them: each Lease with its holder's entry applied (above).
std::vector<SlotSeen> judged_slots(const std::vector<SlotSeen>& leases, const HoldClock& clock);

// A node's failure to record: on `grant` (the Lease it names, not failed yet), or, nullptr, on a
// failed Lease of its own (the grant is gone).
struct FailureToRecord {
    std::string node;
    SlotHold hold;
    const SlotSeen* grant = nullptr;
};

// The failures the coordinator has yet to record: entries that say failed, for the Shim's current
// uid and generation, from a node the Shim selects (a failure elsewhere halts nothing:
// node_scope.hpp), with no failed Lease standing for their grant yet, and not recorded already
// in this term (`recorded`: failure_key). A Lease of its own only for a grant this term saw
// granted to that node (`granted`: grant id -> holder): a node cannot halt a rollout with a
// failure of a grant it never had. An operator's delete of that Lease (the retry of the
// generation) must not bring it back, and the entry stays on the Node until the node takes
// another grant: so a failure whose grant is gone gets a Lease of its own only while the
// coordinator first saw the entry less than slot_timing::free_after ago (a new term, which has
// recorded nothing, sees every entry anew; a retry in the lease before it would be undone, and
// the operator deletes again).
std::vector<FailureToRecord> failures_to_record(const std::vector<SlotSeen>& leases,
                                                const HoldClock& clock, const NodeViews& nodes,
                                                const std::map<std::string, nlohmann::json>& shims,
                                                const std::set<std::string>& recorded,
                                                const std::map<std::string, std::string>& granted,
                                                std::chrono::steady_clock::time_point now);

// The key of a failure in failures_to_record's `recorded`: the node and the grant it failed.
std::string failure_key(const std::string& node, const SlotHold& hold);

// A node's own view: the grants of `own` that its entries on `node` (its own Node, as last read)
// do not say done with. A grant given back is never taken again, neither by the process that gave
// it back (SlotKeeper remembers) nor by another of the node's: a daemon restarted since, or an
// `apply` beside the daemon. Between a give-back and the coordinator's delete the Lease still
// names this node, and the coordinator, having seen the entry say done, frees the slot for the
// next node whatever a later take of the same grant says: taking it then would make one node
// more than maxUpdate change at once.
std::vector<SlotSeen> without_given_back(std::vector<SlotSeen> own, const nlohmann::json& node);

} // namespace shimkeeper::cluster::model
