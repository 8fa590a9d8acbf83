// The writes behind rollout slots (slot_lease.hpp decides): take a slot (create, or move this
// node's own one to a new generation: the API server lets one writer win), renew the slots held
// while a transaction runs (a thread of its own, since the transaction blocks the daemon's loop
// for as long as a download or a health check takes), release a slot after success (delete at
// the version held) and mark one failed (it then stays, and halts the rollout of that
// generation).
//
// A slot is a bound only while it is fresh: each HeldSlot remembers when the last
// write of it that the API server confirmed was sent (this node's monotonic clock, never the
// Lease's renewTime), and whether it was lost (gone, or another node's now). The coordinator
// frees a slot only slot_timing::free_after after it saw that version, so a slot confirmed less
// than slot_timing::fresh_for ago cannot have been handed to anyone yet: the gate lets a
// transaction past its point of no return only then (rollout_gate.hpp).
#pragma once

#include "shimkeeper/cluster/model/slot_lease.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/util/log.hpp"
#include "shimkeeper/util/periodic_worker.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace shimkeeper::cluster::agent {

struct HeldSlot {
    model::RolloutTarget target;
    nlohmann::json lease; // the version this node wrote last
    // When the request of the last confirmed write (take or renewal) was sent.
    std::chrono::steady_clock::time_point confirmed{};
    std::string lost; // why the slot is no longer this node's; empty while it is
    // Once set (SlotRenewal::renew_committing), every write of the slot carries it as its
    // committing mark (slot_lease.hpp): this node is past its point of no return.
    std::chrono::seconds committing{0};
};

// Why `held` may not be trusted as this node's slot at `now`: lost, or not confirmed within
// slot_timing::fresh_for. nullopt: fresh.
std::optional<std::string> why_slot_not_fresh(const HeldSlot& held,
                                              std::chrono::steady_clock::time_point now);

// Why `held` may not be trusted at `now` for a transaction past its point of no return:
// why_slot_not_fresh, or its committing mark not confirmed by the API server yet. nullopt: go on.
std::optional<std::string> why_slot_not_committed(const HeldSlot& held,
                                                  std::chrono::steady_clock::time_point now);

// Pure: whether `current` (the Lease as the API server has it now) is still the slot this node
// took, `held`: same holder, object, generation and acquisition, not failed. Only then may a
// renewal whose answer was lost adopt its resourceVersion.
bool still_held(const model::SlotLease& current, const HeldSlot& held, const std::string& me);

class SlotKeeper {
public:
    // Its Leases say slot_timing::lease as their leaseDurationSeconds.
    SlotKeeper(kubeapi::Client& client, std::string ns, std::string me)
        : m_client(client), m_ns(std::move(ns)), m_me(std::move(me)) {}

    // nullopt: another node won the slot first (AlreadyExists, or a 409 on the takeover).
    util::Expected<std::optional<HeldSlot>> take(const model::RolloutTarget& target,
                                                 const model::SlotDecision& decision);
    // Deletes the slot at the version held; gone already is fine; a slot another node took over
    // in the meantime (it expired) is left to it.
    util::Expected<void> release(const HeldSlot& held);
    // Marks the slot failed with `reason`, at whatever version it has now, while it is ours.
    // Lost (gone, or another node's now: it expired while this node could not renew), the
    // failure still halts the rollout: a failed slot Lease of the same generation is created
    // under the first absent name, from the slot's own index upwards (decision: the
    // marker is an ordinary failed slot, so the coordinator's RolloutHalted, the waiting nodes
    // and `kubectl delete lease` to resume treat it like any other). Returns the Lease marked.
    util::Expected<std::string> fail(const HeldSlot& held, const std::string& reason);
    // One renewal (renewTime now); updates held.lease and held.confirmed. A 409 whose cause is
    // this node's own earlier renewal (its answer lost on the way) adopts the version the API
    // server has and renews again; a slot gone or another node's sets held.lost.
    util::Expected<void> renew(HeldSlot& held);

private:
    util::Expected<std::string> mark_failed_elsewhere(const HeldSlot& held,
                                                      const std::string& text);

    kubeapi::Client& m_client;
    std::string m_ns;
    std::string m_me;
};

// Renews the given slots every slot_timing::renew_every on a worker thread (util/periodic_worker)
// with its own connection, from construction to stop() (or destruction). What it renewed is
// handed back by stop(). Each round is a pass of its own (request_bound.hpp): after its first
// unanswered request the round's other renewals wait for the next round, and stop() fails
// whatever it has not asked yet.
class SlotRenewal {
public:
    SlotRenewal(kubeapi::KubeConfig config, std::string ns, std::string me,
                std::vector<HeldSlot> held, util::Log log);
    ~SlotRenewal();
    SlotRenewal(const SlotRenewal&) = delete;
    SlotRenewal& operator=(const SlotRenewal&) = delete;

    std::vector<HeldSlot> stop();
    // The slots as the last renewals left them (the thread keeps renewing).
    std::vector<HeldSlot> held() const;
    // Has the thread renew every slot at once, each now carrying `allowance` as its committing
    // mark (and every later renewal too), and waits until that round has ended or `wait` has
    // passed: the slots as they are then.
    std::vector<HeldSlot> renew_committing(std::chrono::seconds allowance,
                                           std::chrono::milliseconds wait);

private:
    void renew_round(const std::atomic<bool>& stopping);

    kubeapi::Client m_client;
    SlotKeeper m_keeper;
    util::Log m_log;
    mutable std::mutex m_mutex;
    std::condition_variable m_round_ended;
    // renew_committing's request: the allowance, and whether a round has carried it yet.
    std::chrono::seconds m_committing{0};
    bool m_committing_confirmed = false;
    bool m_stopped = false;
    std::vector<HeldSlot> m_held;
    util::PeriodicWorker m_worker; // last: its thread uses everything above
};

} // namespace shimkeeper::cluster::agent
