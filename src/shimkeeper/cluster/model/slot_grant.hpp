// Slot grants: the coordinator hands rollout slots out, so that no agent watches
// objects about other nodes. A node that waits for a slot says so on its own Node (the request
// annotation below, written with its report); the coordinator, which watches Nodes and Leases
// anyway, creates the slot Lease `<shim>-slot-<i>` with that node as holder and labelled with it
// (or, when a slot of that name is being freed in the same step, rewrites that Lease at the
// version it judged: one write instead of a delete and a create, equally fenced);
// each agent watches only the Leases labelled with its own name (reading, never writing them) and
// takes a granted slot on its own Node (slot_hold.hpp), from where it renews, marks committing,
// fails and releases it there (slot_keeper.hpp, rollout_gate.hpp). A request is
// served once: after the slot granted for it went, the coordinator grants nothing more for it (a
// dead daemon would otherwise get every slot freed, each for a lease; a node between its release
// and its next report would get one it never takes), and a node that waits again asks anew.
//
// The bound stays the API server's: a slot is a Lease name below the slot count, a create of a
// name that exists fails, and a hand-over replaces only the version judged free. A coordinator
// that grants twice (a failover, a watch that lags behind its own writes) can waste a slot until
// it expires, never add one. Halting is the coordinator
// granting nothing more for a generation with a failed slot.
#pragma once

#include "shimkeeper/cluster/model/slot_lease.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

// On the node's own Node, under shimkeeper's prefix (the node's admission policy allows only that
// prefix): {"<shim>": {"uid": ..., "generation": ..., "since": ..., "refused": ...}, ...}
// ("refused" only while the API server refuses what the node needs to take a grant: the
// coordinator shows it in the Shim's status, naming the node). The underscore keeps
// it apart from the per-Shim keys, whose names are DNS subdomains and never contain one.
inline constexpr const char* k_slot_requests_key = "shim.containerd.x-k8s.io/slot_requests";
// On a slot Lease: its holder, so that a node can watch only its own (a label selector).
inline constexpr const char* k_slot_holder_label = "shim.containerd.x-k8s.io/holder";
struct SlotRequest {
    std::string uid;
    long generation = 0;
    std::string since; // when this daemon began to wait (micro time): each wait asks anew
    // What the API server refuses this node that it needs to take a grant (its watch of the
    // slot Leases granted to it), with the server's message; empty when nothing is refused.
    std::string refused{};
    // The same request: uid, generation and since. A refusal that comes or goes is a remark on
    // it, not a new request (a request served stays served).
    bool operator==(const SlotRequest& other) const {
        return uid == other.uid && generation == other.generation && since == other.since;
    }
    bool is_for(const RolloutTarget& target) const {
        return uid == target.uid && generation == target.generation;
    }
};
using SlotRequests = std::map<std::string, SlotRequest>; // by Shim name

std::string format_slot_requests(const SlotRequests& requests);
// Malformed text or entries are left out: a node rewrites its requests with every report.
SlotRequests slot_requests_of(const std::string& annotation);
// True when `after` holds a request that `before` did not (a new Shim, generation or wait): the
// coordinator grants for it at once instead of after its settle time.
bool asks_anew(const SlotRequests& before, const SlotRequests& after);

// The holder label's value for `node`: the name itself when it is a valid label value (63
// characters at most), else "h-" and 40 hex digits of its SHA-256.
std::string holder_label_value(const std::string& node);

// A rolling Shim generation as the coordinator sees it, with its resolved slot count.
struct GrantTarget {
    RolloutTarget target;
    bool halted = false; // a slot of this generation failed: no grants
};

struct SlotGrant {
    RolloutTarget target;
    int index = -1;
    std::string node;
};

// A request granted, and, once its slot went (released, or freed because the node stopped
// renewing it or never took it), served: not granted again while the node still says it. A
// daemon that waits again, or starts again, asks anew with a new `since`.
struct Declined {
    std::string node;
    std::string shim;
    SlotRequest request;
    bool operator==(const Declined&) const = default;
};

// The grants made, by Lease name: the node and the request granted.
using Grants = std::map<std::string, Declined>;

// The grants whose slot went (no longer held by their node in `slots`), skipping those whose
// Lease the watch has not shown yet (`pending`): their requests are served.
std::vector<std::string> gone_grants(const Grants& granted, const std::vector<SlotSeen>& slots,
                                     const std::set<std::string>& pending);

// What to grant now. For each target that is not halted: the indexes below its slot count with
// no Lease of that name (in `slots`, or in `pending`: grants made but not yet seen on the
// watch), each to a node whose request names this uid and generation, carries no refusal (the
// node could not see the grant), that holds no slot of the Shim yet (nor a pending grant) and
// whose request was not declined. Nodes in name order,
// indexes from 0.
std::vector<SlotGrant> plan_slot_grants(const std::vector<GrantTarget>& targets,
                                        const std::vector<SlotSeen>& slots,
                                        const std::map<std::string, SlotRequests>& requests,
                                        const std::vector<SlotGrant>& pending,
                                        const std::vector<Declined>& declined);

// The Lease that grants `grant`: held by the node, labelled with it, renewed now.
nlohmann::json granted_slot_lease(const SlotGrant& grant, const std::string& now_micro);

// The Lease that hands `previous` (a slot Lease being freed, of the same name) over to `grant`:
// granted_slot_lease's, replacing the version judged (a conflict when it changed since, as its
// delete would have been), with a grant identity of its own (k_slot_grant_key: the Lease's uid
// and its count of hand-overs, spec.leaseTransitions), so that nothing said of an earlier grant
// of this Lease (its holder's entry, a release a node remembers) counts for this one.
nlohmann::json handed_over_slot_lease(const SlotGrant& grant, const SlotLease& previous,
                                      const std::string& now_micro);

// The decision of node `me` over the slots granted to it (the Leases labelled with its name):
// hold (or move to the target's generation, `take` with `existing`) the one it has; wait for a
// grant otherwise (`halted`: why the Shim's rollout halted, from its RolloutHalted condition).
SlotDecision decide_granted_slot(const std::vector<SlotSeen>& own, const RolloutTarget& target,
                                 const std::string& me, const std::string& halted);

// The message of the Shim's RolloutHalted condition while it is True, empty otherwise.
std::string rollout_halted_message(const nlohmann::json& shim);

} // namespace shimkeeper::cluster::model
