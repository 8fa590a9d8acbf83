// Rollout slots (CLUSTER.md, "Rolling rollout and halt"): Leases `<shim>-slot-<i>`, i < the slot
// count, in the agent namespace. A node changes a rolling Shim only while it holds one; the API
// server alone decides who wins one (create: AlreadyExists, replace: resourceVersion precondition).
// Pure: what a slot Lease says, the Lease to write, and the decision a node makes over the slots
// it has seen. slot_keeper.hpp does the writes; slot_board.hpp keeps the watched ones.
//
// A slot Lease carries, besides holderIdentity / leaseDurationSeconds / acquireTime / renewTime:
//   annotation shim.containerd.x-k8s.io/shim        the Shim's name
//              shim.containerd.x-k8s.io/uid         the Shim's uid (a recreated Shim is another)
//              shim.containerd.x-k8s.io/generation  the generation the holder is rolling out
//              shim.containerd.x-k8s.io/failed      set when the holder's transaction failed:
//                                                   the reason. It never expires: the rollout of
//                                                   that generation halts until it is deleted or
//                                                   the Shim gets a new generation.
//              shim.containerd.x-k8s.io/committing  set by the holder in the renewal it sends
//                                                   just before its first change: how many
//                                                   seconds its transaction may still take from
//                                                   there to its commit or the end of its
//                                                   rollback (reconcile/commit_bound.hpp).
//
// When the coordinator frees a slot nobody renews (slot_reclaim_after): a lease after it last saw
// it change, judged by its own constant lease, never by the Lease's leaseDurationSeconds (a node
// writes that field, and a huge one would hold the slot for ever); for a slot marked committing,
// that long again on top (at most k_max_commit_allowance), because its holder may be restarting
// containerd while cut off from the API server, and nobody else may start before it is done.
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
inline constexpr const char* k_slot_committing_key = "shim.containerd.x-k8s.io/committing";

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
    std::string holder; // empty: released
    std::string failed; // the reason; empty while not failed
    std::chrono::seconds duration{0};
    std::chrono::seconds committing{0}; // the holder's mark; 0: not past its point of no return
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

// The Lease that gives slot `index` of `target` to `holder`: new (for a create) or `existing`
// taken over (its resourceVersion kept as the precondition).
nlohmann::json slot_lease_for(const RolloutTarget& target, int index, const std::string& holder,
                              std::chrono::seconds duration, const std::string& now_micro,
                              const nlohmann::json* existing);

// A slot as a node saw it: the Lease and when this node saw that version of it appear (its own
// monotonic clock, client-go's rule: expiry never trusts another machine's clock).
struct SlotSeen {
    SlotLease lease;
    std::chrono::steady_clock::time_point seen;
};

struct SlotDecision {
    enum class Kind {
        hold,   // this node holds slot `index` for this generation already
        take,   // try slot `index`: create it (existing == nullptr) or move this node's own
                // `existing` slot to the target's generation
        halted, // a slot of this generation failed: nobody takes one
        wait,   // every slot busy
    } kind = Kind::wait;
    int index = -1;
    const SlotSeen* existing = nullptr;
    std::string why; // halted, wait: for logs and status
};

// A slot of `target`'s Shim object that `me` holds already (not failed): hold it when it is of
// the target's generation, else take it (`existing`: move it to the target's generation). A slot
// at an index at or above the target's slot count (the count shrank: a lower maxUpdate, fewer
// nodes under a percentage) is never carried into the new generation: the coordinator may be
// granting the indexes below the count to other nodes already, and carrying it would make one
// more than the bound. The gate releases such a slot (own_slots_beyond_count).
std::optional<SlotDecision> own_slot_decision(const std::vector<SlotSeen>& slots,
                                              const RolloutTarget& target, const std::string& me);

// The slots of `target`'s Shim object that `me` holds, not failed, of another generation than
// the target's, at an index at or above its slot count: to release, not to carry.
std::vector<const SlotSeen*> own_slots_beyond_count(const std::vector<SlotSeen>& slots,
                                                    const RolloutTarget& target,
                                                    const std::string& me);

// The decision of node `me` for `target` over the slots it has seen (any Shim's; others are
// ignored). Decision: a node only ever creates an absent slot or writes its own; a
// slot another node holds, even expired, released or failed for an older generation, is
// reclaimed (deleted) by the coordinator, so no node's credential needs the right to write a
// Lease that another node holds (deploy/'s policies refuse it). `start` spreads nodes over the
// absent slots.
SlotDecision decide_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target,
                         const std::string& me, unsigned start);

// Why the coordinator deletes this slot Lease, nullopt to keep it. `shim` is the Shim it names
// as the coordinator sees it (nullptr: none of that name). Reclaimed: a slot released (no holder),
// expired (not renewed within its duration, judged by when the coordinator saw this version),
// failed for another generation or uid than the Shim's current one, or of a Shim that is gone
// (unless still live: the view may not have a new Shim yet).
std::optional<std::string> slot_reclaim_reason(const SlotSeen& slot, const nlohmann::json* shim,
                                               std::chrono::steady_clock::time_point now);

// How long after the coordinator saw this version of the slot it may free it unrenewed.
std::chrono::seconds slot_reclaim_after(const SlotLease& lease);

// When the first live, unfailed slot of `slots` expires unrenewed (the coordinator's next look).
std::optional<std::chrono::steady_clock::time_point>
next_slot_expiry(const std::vector<SlotSeen>& slots);

// The failed slot of `target`'s generation, if any.
const SlotSeen* failed_slot(const std::vector<SlotSeen>& slots, const RolloutTarget& target);

// Why a rollout halted, the one wording of the RolloutHalted condition, a waiting node's log and
// `status`: the node, the generation, its reason and the two ways to resume (a new generation,
// or `kubectl delete lease` of the failed slot).
std::string halt_message(const SlotLease& failed);

} // namespace shimkeeper::cluster::model
