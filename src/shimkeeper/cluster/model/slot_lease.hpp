// Rollout slots (CLUSTER.md, "Rolling rollout and halt"): Leases `<shim>-slot-<i>`, i < the slot
// count, in the agent namespace, written by the coordinator alone: it grants a slot to a node by
// creating its Lease, or by handing over one it frees (slot_grant.hpp), and revokes, marks failed
// and deletes it. The API server decides that a name has one grant at a time (a create of a name
// that exists fails, a hand-over replaces only the version judged free). The node takes,
// renews, marks committing, fails and releases its grant on its own Node (slot_hold.hpp).
// Pure: what a slot Lease says, the Lease to write, and the decisions over the slots seen.
// slot_keeper.hpp does a node's writes; slot_board.hpp keeps the watched Leases.
//
// A slot Lease carries, besides holderIdentity / leaseDurationSeconds / acquireTime / renewTime:
//   annotation shim.containerd.x-k8s.io/shim        the Shim's name
//              shim.containerd.x-k8s.io/uid         the Shim's uid (a recreated Shim is another)
//              shim.containerd.x-k8s.io/generation  the generation granted
//              shim.containerd.x-k8s.io/failed      set when the holder's transaction failed:
//                                                   the reason. It never expires: the rollout of
//                                                   that generation halts until it is deleted or
//                                                   the Shim gets a new generation.
//              shim.containerd.x-k8s.io/grant       on a failed Lease made for a grant that was
//                                                   gone by the time its failure came: that
//                                                   grant's id; on a Lease handed over: its
//                                                   grant's id (without it, the Lease's uid)
//              shim.containerd.x-k8s.io/revoked     set by the coordinator when it frees a slot
//                                                   whose holder stopped renewing: why. A node
//                                                   trusts no revoked grant; the coordinator
//                                                   deletes it slot_timing::revoked_for later,
//              shim.containerd.x-k8s.io/revoked-over  if the holder's entry is still the one it
//                                                   judged (this text; empty: none named the
//                                                   grant). A renewal its watch had not shown yet
//                                                   (a committing mark among them) cancels the
//                                                   revoke instead.
//   and, in the judged view only (judged_slots), the holder's committing mark from its Node.
//
// When the coordinator revokes a slot nobody renews (slot_reclaim_after): a lease after it last saw
// the grant or its holder's entry change, judged by its own constant lease, never by the Lease's
// leaseDurationSeconds; for a slot marked committing, that long again on top (at most
// k_max_commit_allowance), because its holder may be restarting containerd while cut off from the
// API server, and nobody else may start before it is done.
#pragma once

#include "shimkeeper/cluster/model/slot_timing.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::cluster::model {

inline constexpr const char* k_slot_shim_key = "shim.containerd.x-k8s.io/shim";
inline constexpr const char* k_slot_uid_key = "shim.containerd.x-k8s.io/uid";
inline constexpr const char* k_slot_generation_key = "shim.containerd.x-k8s.io/generation";
inline constexpr const char* k_slot_failed_key = "shim.containerd.x-k8s.io/failed";
inline constexpr const char* k_slot_grant_key = "shim.containerd.x-k8s.io/grant";
inline constexpr const char* k_slot_revoked_key = "shim.containerd.x-k8s.io/revoked";
inline constexpr const char* k_slot_revoked_over_key = "shim.containerd.x-k8s.io/revoked-over";

// The most a holder's committing mark extends its slot: it bounds how long a node that crashed
// past its point of no return, and never came back, keeps a rollout waiting.
inline constexpr std::chrono::seconds k_max_commit_allowance{3600};

// "<shim>-slot-<i>"; a name too long for a Lease keeps a prefix and a hash of the Shim's name.
std::string slot_lease_name(std::string_view shim, int index);
// The <i> of "...-slot-<i>"; -1 for any other name.
int slot_index_of(const std::string& name);

struct SlotLease {
    std::string name;
    std::string namespace_name;
    std::string shim; // empty: not a slot Lease (the coordinator's, or someone else's)
    std::string uid;
    long generation = 0;
    std::string holder;       // empty: released
    std::string failed;       // the reason; empty while not failed
    std::string revoked;      // why the coordinator took it back; empty while it has not
    std::string revoked_over; // the holder's entry the revoke judged (slot_hold.hpp's text)
    std::string grant;        // the grant it stands for: its own metadata.uid, or a failed marker's
    std::chrono::seconds committing{0}; // the holder's mark (judged view); 0: not past its point
                                        // of no return
    std::string resource_version;
    nlohmann::json object;
};

SlotLease slot_lease_of(const nlohmann::json& lease);

// What a node rolls out: the Shim (name, uid, generation) and its slot count.
struct RolloutTarget {
    std::string shim;
    std::string uid;
    long generation = 0;
    int slots = 1;
};

// The Lease that gives slot `index` of `target` to `holder` (the coordinator's create: a grant,
// or a failed marker), labelled with its holder so that the holder can watch only its own.
nlohmann::json slot_lease_for(const RolloutTarget& target, int index, const std::string& holder,
                              const std::string& now_micro);

// A slot as a watch saw it: the Lease and when that version of it appeared here (this machine's
// monotonic clock, client-go's rule: expiry never trusts another machine's clock). In the
// coordinator's judged view, when it last saw the Lease or its holder's entry change.
struct SlotSeen {
    SlotLease lease;
    std::chrono::steady_clock::time_point seen;
};

struct SlotDecision {
    enum class Kind {
        hold,   // slot `index` (`existing`) is granted to this node for this generation: take it
        halted, // a slot of this generation failed: nobody takes one
        wait,   // no grant yet
    } kind = Kind::wait;
    int index = -1;
    const SlotSeen* existing = nullptr;
    std::string why; // halted, wait: for logs and status
};

// The slot of `target` granted to `me` (same Shim object and generation), not failed, not
// revoked: hold it.
std::optional<SlotDecision> own_slot_decision(const std::vector<SlotSeen>& slots,
                                              const RolloutTarget& target, const std::string& me);

// The grants of `target`'s Shim object to `me` of another generation than the target's, not
// failed: to release (a grant is of one generation; the coordinator grants the target's anew).
std::vector<const SlotSeen*> own_stale_grants(const std::vector<SlotSeen>& slots,
                                              const RolloutTarget& target, const std::string& me);

// What the coordinator does with a slot, and `why` for its log.
struct SlotFree {
    enum class Action {
        revoke,                // a live holder that stopped renewing: mark it revoked first
        delete_unless_renewed, // revoked long enough: delete, unless its holder's entry changed
        delete_now,            // released, failed for another generation, of a Shim gone
    };
    std::string why;
    Action action = Action::delete_now;
    bool operator==(const SlotFree&) const = default;
};

// How long the coordinator lets a slot go unrenewed: as promised (slot_reclaim_after), or half a
// lease, a deliberately broken coordinator for tests of the tests only (the coordinator passes it
// when the fault switch slot-reclaim-early is on: reconcile/fault.hpp).
enum class SlotReclaimWait { promised, half_lease };

// What the coordinator does with this slot (judged_slots' view), nullopt to keep it. `shim` is
// the Shim it names as the coordinator sees it (nullptr: none of that name). Deleted: a slot
// released (its holder says done), revoked a slot_timing::revoked_for ago, failed for another
// generation or uid than the Shim's current one, or of a Shim that is gone (unless still live:
// the view may not have a new Shim yet). Revoked: a live slot not seen to change for
// slot_reclaim_after.
std::optional<SlotFree> slot_reclaim_reason(const SlotSeen& slot, const nlohmann::json* shim,
                                            std::chrono::steady_clock::time_point now,
                                            SlotReclaimWait wait);

// How long after the coordinator saw this version of the slot it may revoke it unrenewed, or
// delete it once revoked.
std::chrono::milliseconds slot_reclaim_after(const SlotLease& lease, SlotReclaimWait wait);

// When the first live or revoked, unfailed slot of `slots` is due (the coordinator's next look).
std::optional<std::chrono::steady_clock::time_point>
next_slot_expiry(const std::vector<SlotSeen>& slots, SlotReclaimWait wait);

// The failed slot of `target`'s generation, if any.
const SlotSeen* failed_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target);

// Why a rollout halted, the one wording of the RolloutHalted condition, a waiting node's log and
// `status`: the node, the generation, its reason and the two ways to resume (a new generation,
// or `kubectl delete lease` of the failed slot).
std::string halt_message(const SlotLease& failed);

} // namespace shimkeeper::cluster::model
