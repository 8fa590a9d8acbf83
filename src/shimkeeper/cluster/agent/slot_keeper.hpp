// A node's side of its rollout slots (slot_hold.hpp decides the shape): take a slot the
// coordinator granted it, renew it while a transaction runs (a thread of its own, since the
// transaction blocks the daemon's loop for as long as a download or a health check takes),
// release it after success and mark it failed after a failure (the coordinator then marks the
// grant failed, which halts the rollout of that generation). Each is a merge patch of one
// annotation on this node's own Node: the node writes no Lease.
//
// A grant the daemon's watch has just shown is adopted without a request (adopt): the first write
// of its entry takes it, and that write goes with the Node's `installing` report before the first
// change (rollout_gate.hpp), or with a renewal round should the transaction take longer than
// slot_timing::renew_every to get there (a download inside the slot). One Node write and one
// quorum read less per slot than a take of its own; the coordinator times an untaken grant by its
// Lease alone (slot_view.hpp), so it frees one nobody takes after slot_timing::free_after, as
// before. A grant from a view of unknown age (the watch's board read after the daemon's loop was
// held up, `apply`'s list) is taken at once (take: the entry written, then the grant read), so
// that a node never says `installing` on a grant that went while its view stood still.
//
// A slot is a bound only while it is fresh: a take or renewal writes the entry and then reads the
// grant (a quorum read); when the grant is still this node's and not revoked, the slot is
// confirmed as of when the write was sent (this node's monotonic clock). The coordinator deletes
// a grant only slot_timing::revoked_for after it revoked it, and every read that found it
// unrevoked came before the revoke, so a slot confirmed less than slot_timing::fresh_for ago
// cannot have been handed to anyone yet: the gate lets a transaction past its point of no return
// only then, and only once its committing mark is confirmed, which an untaken slot never is
// (rollout_gate.hpp).
#pragma once

#include "shimkeeper/cluster/model/slot_hold.hpp"
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
    nlohmann::json lease; // the grant as this node read it last
    // When the write of the last confirmed take or renewal was sent; unset until one is (taken()).
    std::chrono::steady_clock::time_point confirmed{};
    // As of when the view that showed the grant as this node's was up to date (SlotKeeper::adopt):
    // until the slot is taken, whether the Node may say `installing` for it is judged by this.
    std::chrono::steady_clock::time_point adopted{};
    std::string lost; // why the slot is no longer this node's; empty while it is
    // Once set (SlotRenewal::renew_committing), every renewal carries it as its committing mark
    // (slot_hold.hpp): this node is past its point of no return.
    std::chrono::seconds committing{0};
    model::SlotHold hold{};                      // this node's entry as it last wrote it
    std::chrono::seconds confirmed_committing{}; // the mark of the last confirmed renewal
    // Gone for good (deleted, or granted anew): renewing it is pointless. A grant revoked or
    // marked failed is still renewed: the renewals are what make the coordinator withdraw a
    // revoke it made on a view that missed them, and a renewal that finds it unrevoked again
    // clears `lost`.
    bool gone = false;
    // Why the last renewal (or take) failed, for what the node says while it waits; empty after
    // one that succeeded.
    std::string last_failure{};

    // Its entry was written and the grant read after it at least once: the slot is taken.
    bool taken() const { return confirmed != std::chrono::steady_clock::time_point{}; }
};

// Why `held` may not be trusted as this node's slot at `now`: lost, or not confirmed within
// slot_timing::fresh_for; a slot not taken yet, adopted from a view more than fresh_for old (only
// its committing mark, confirmed, lets a transaction past its point of no return). nullopt: fresh.
std::optional<std::string> why_slot_not_fresh(const HeldSlot& held,
                                              std::chrono::steady_clock::time_point now);

// Why `held` may not be trusted at `now` for a transaction past its point of no return:
// why_slot_not_fresh, or its committing mark not confirmed by the API server yet. nullopt: go on.
std::optional<std::string> why_slot_not_committed(const HeldSlot& held,
                                                  std::chrono::steady_clock::time_point now);

// Whether a renewal round renews `held` at `now`: yes, unless the transaction has begun its
// changes (`changing`: past the gate's last freshness check, which comes after the write-ahead),
// the slot's committing mark is confirmed, and the allowance it states (at most
// model::k_max_commit_allowance) has not passed since that write was sent. Once changing, a
// transaction checks no freshness, and the coordinator keeps the slot free_after plus the mark
// after it saw the write (slot_lease.hpp), so a renewal in the first round after the allowance
// keeps the usual margin (free_after - renew_every) and the ones before it would be Node writes
// and grant reads for nothing. Before that last check, and for a mark asked for but not
// confirmed yet, every round renews.
bool renewal_due(const HeldSlot& held, bool changing, std::chrono::steady_clock::time_point now);

// Pure: why `current` (the grant as the API server has it now) is no longer the slot this node
// took, `held`: another holder or grant, failed, or revoked. nullopt: still this node's.
std::optional<std::string> why_not_held(const model::SlotLease& current, const HeldSlot& held,
                                        const std::string& me);

// The slot that `grant` gives this node, as its entry names it: for releasing a grant this run
// did not take (one of an older generation).
HeldSlot held_of(const model::SlotLease& grant);

class SlotKeeper {
public:
    // `me`: this node, whose Node it writes.
    SlotKeeper(kubeapi::ApiClient& client, std::string ns, std::string me)
        : m_client(client), m_ns(std::move(ns)), m_me(std::move(me)) {}

    // Adopts the slot granted to this node (decision.existing: the grant as a view showed it as
    // of `seen`) without a request; its first write (the `installing` report's, or a renewal)
    // takes it. nullopt: this process released that grant already (release()).
    static std::optional<HeldSlot> adopt(const model::RolloutTarget& target,
                                         const model::SlotDecision& decision,
                                         std::chrono::steady_clock::time_point seen);
    // Whether this process gave `grant` back (released it, or is releasing it with a report):
    // then the last failure of a write about it (empty: none), else nullopt.
    static std::optional<std::string> given_back(const model::SlotLease& grant);
    // Adopts the slot and takes it at once: writes the entry naming it, then reads the grant.
    // nullopt: it is no longer this node's (revoked, gone or marked failed since), or this
    // process released it (release()): then nothing is written.
    util::Expected<std::optional<HeldSlot>> take(const model::RolloutTarget& target,
                                                 const model::SlotDecision& decision);
    // Says done: the coordinator deletes the grant. This process never takes it again.
    util::Expected<void> release(const HeldSlot& held);
    // The entry a release writes, `held`'s marked done, counted as released by this process
    // already (a write that fails may still have reached the API server): for a release that
    // goes with another write of the Node (the report after a transaction).
    static model::SlotHold released_hold(const HeldSlot& held);
    // Says failed with `reason`: the coordinator marks the grant failed, or, if it is gone by
    // then, creates a failed Lease for it (slot_view.hpp), which halts the rollout of that
    // generation. Returns the grant's name.
    util::Expected<std::string> fail(const HeldSlot& held, const std::string& reason);
    // One renewal (the take, for a slot not taken yet): the entry written (its `renewed` now, its
    // committing mark), then the grant read; updates held.lease, held.confirmed and
    // held.confirmed_committing, or sets held.lost when the grant is no longer this node's.
    util::Expected<void> renew(HeldSlot& held);
    // The entry a renewal writes: `held`'s, its `renewed` now, with its committing mark.
    static model::SlotHold renewed_hold(const HeldSlot& held);
    // The rest of a renewal whose entry, `written`, went in another write of the Node sent at
    // `sent` (the Node report before the change, rollout_gate.hpp): reads the grant and updates
    // `held` as renew() does.
    util::Expected<void> confirm_written(HeldSlot& held, const model::SlotHold& written,
                                         std::chrono::steady_clock::time_point sent);

private:
    util::Expected<void> write(const model::SlotHold& hold, const std::string& what);
    // Reads the grant: true while it is this node's (held.lease updated), false with held.lost.
    util::Expected<bool> read_grant(HeldSlot& held);

    kubeapi::ApiClient& m_client;
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

    // The transaction passed its last freshness check and begins its changes: from now on
    // renewal_due spares the slots whose committing mark is confirmed.
    void changes_begun();

    // Holds the thread's rounds off, after the one in flight if any (waited for at most
    // `wait`), for as long as it lives: for a committing mark that another write of the Node
    // carries (the Node report before the change, rollout_gate.hpp), which no renewal without
    // the mark may overtake.
    class Paused {
    public:
        // False when the round in flight did not end within the wait: nothing is held off.
        bool holds_rounds_off() const { return m_rounds.owns_lock(); }
        // The slots as the last round left them.
        std::vector<HeldSlot> held() const;
        // The slots as that write and SlotKeeper::confirm_written left them (each with its
        // committing mark); every later round carries `allowance` as their mark, as after
        // renew_committing.
        void committed(std::vector<HeldSlot> held, std::chrono::seconds allowance);

    private:
        friend class SlotRenewal;
        Paused(SlotRenewal& renewal, std::chrono::milliseconds wait)
            : m_renewal(renewal), m_rounds(renewal.m_round, wait) {}
        SlotRenewal& m_renewal;
        std::unique_lock<std::timed_mutex> m_rounds;
    };
    Paused pause(std::chrono::milliseconds wait) { return Paused(*this, wait); }

private:
    void renew_round(const std::atomic<bool>& stopping);

    kubeapi::Client m_client;
    SlotKeeper m_keeper;
    util::Log m_log;
    std::timed_mutex m_round; // held by a round, or by Paused; taken before m_mutex
    mutable std::mutex m_mutex;
    std::condition_variable m_round_ended;
    // renew_committing's request: the allowance, and whether a round has carried it yet.
    std::chrono::seconds m_committing{0};
    bool m_committing_confirmed = false;
    bool m_changes_begun = false;
    bool m_stopped = false;
    std::vector<HeldSlot> m_held;
    util::PeriodicWorker m_worker; // last: its thread uses everything above
};

} // namespace shimkeeper::cluster::agent
