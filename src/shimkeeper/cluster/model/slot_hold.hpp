// A node's side of a rollout slot, on its own Node (CLUSTER.md, "Identity and least privilege":
// a node's credential writes nothing but its own Node). The coordinator grants a slot by creating
// the Lease `<shim>-slot-<i>` held by the node, or handing it over (slot_grant.hpp); from then on
// the Lease is the coordinator's alone and the node says everything in one annotation per Shim:
//
//   shim.containerd.x-k8s.io/held_<shim>   {"shim": ..., "lease": <the grant's name>,
//                                           "grant": <the grant's id>, "uid": <the
//                                           Shim's uid>, "generation": G, "renewed": <micro
//                                           time by the node's clock>, "committing": seconds,
//                                           "failed": reason, "done": true}
//
//   take       the entry naming the grant, written once the node saw the Lease granted to it;
//   renew      the same entry with a new `renewed` (a change the coordinator times on its own
//              clock: the text is all it compares, never the time in it);
//   committing the holder's mark before its first change (reconcile/commit_bound.hpp);
//   failed     the transaction failed: the coordinator marks the grant failed (the halt), or,
//              when the grant is gone already, creates a failed Lease for it (slot_view.hpp);
//   done       released: the coordinator deletes the grant at once.
//
// The underscore keeps the keys apart from the per-Shim state keys (DNS subdomains have none) and
// from `slot_requests`: "held_" never starts a Shim name. A name too long for an annotation key
// keeps a prefix and a hash of it; the entry names the Shim in full.
//
// Why a node may trust a grant (slot_keeper.hpp): it writes its entry, then reads the Lease
// (a quorum read) and finds it still its own and not revoked. The coordinator frees a live grant
// only by first marking it revoked (slot_lease.hpp: k_slot_revoked_key), reading the node's Node
// again (a renewal it had not seen cancels the revoke), and deleting it only
// slot_timing::revoked_for later: every read that found the grant unrevoked came before the
// revoke, so the trust it gave (slot_timing::fresh_for from the write before it) ends before the
// delete. Pure: the entry, its key, its text and the patch.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::cluster::model {

inline constexpr std::string_view k_slot_hold_key_prefix = "shim.containerd.x-k8s.io/held_";

struct SlotHold {
    std::string shim;
    std::string lease; // the grant's Lease name
    std::string grant; // the grant's id (SlotLease::grant): a grant freed and made again is another
    std::string uid;   // the Shim's uid
    long generation = 0;
    std::string renewed{}; // micro time by the node's clock: only a change token to the coordinator
    std::chrono::seconds committing{0};
    std::string failed{}; // the reason; empty while not failed
    bool done = false;    // released

    bool operator==(const SlotHold&) const = default;
};

// "shim.containerd.x-k8s.io/held_<shim>", or with a hash of a name too long for a key.
std::string slot_hold_key(std::string_view shim);

std::string format_slot_hold(const SlotHold& hold);
// nullopt: not such an entry (malformed, hand-written): the coordinator ignores it.
std::optional<SlotHold> slot_hold_of(const std::string& annotation);

// The holds among a Node's annotations (full keys), by Shim name.
std::map<std::string, SlotHold>
slot_holds_in(const std::map<std::string, std::string>& annotations);

// The merge patch that sets this one entry on the Node (nothing else is touched).
nlohmann::json slot_hold_patch(const SlotHold& hold);
// `patch` (a merge patch of the Node, or none) setting each of `holds` too, so that one write
// says both; `patch` itself when there are no holds.
std::optional<nlohmann::json> with_slot_holds(std::optional<nlohmann::json> patch,
                                              const std::vector<SlotHold>& holds);

} // namespace shimkeeper::cluster::model
