#include "shimkeeper/cluster/agent/slot_keeper.hpp"

#include "shimkeeper/cluster/agent/write_refusal_notices.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>

namespace shimkeeper::cluster::agent {

using nlohmann::json;

namespace {

// An annotation value is not limited by the API, but a reason need not be a novel.
std::string short_reason(const std::string& reason) {
    constexpr std::size_t k_most = 1000;
    return reason.size() <= k_most ? reason : reason.substr(0, k_most) + "...";
}

} // namespace

std::optional<std::string> why_not_held(const model::SlotLease& current, const HeldSlot& held,
                                        const std::string& me) {
    if (current.holder != me || current.grant != held.hold.grant) {
        return "it was granted anew since (to " +
               (current.holder.empty() ? std::string("nobody") : current.holder) + ")";
    }
    if (!current.failed.empty()) {
        return "it is marked failed";
    }
    if (!current.revoked.empty()) {
        return "the coordinator revoked it: " + current.revoked;
    }
    return std::nullopt;
}

HeldSlot held_of(const model::SlotLease& grant) {
    HeldSlot held{{grant.shim, grant.uid, grant.generation, 1}, grant.object, {}, {}, {}};
    held.hold = model::SlotHold{grant.shim, grant.name, grant.grant, grant.uid, grant.generation};
    return held;
}

util::Expected<void> SlotKeeper::write(const model::SlotHold& hold, const std::string& what) {
    auto patched =
        m_client.merge_patch(kubeapi::nodes_resource(), "", m_me, model::slot_hold_patch(hold));
    std::optional<util::Error> failed;
    if (!patched) {
        failed = std::move(patched.error())
                     .with_context(what + " rollout slot " + hold.lease + " (annotation " +
                                   model::slot_hold_key(hold.shim) + " on Node " + m_me + ")");
    }
    auto unsent = WriteRefusalNotices::of_this_process().after_write(
        m_client, m_me, {shim_reference(hold.shim, hold.uid)}, "HoldSlot",
        failed ? &*failed : nullptr);
    if (failed) {
        if (unsent) {
            failed =
                util::Error(failed->code(), failed->message() + " (and " + unsent->message() + ")");
        }
        return std::unexpected(std::move(*failed));
    }
    return {};
}

util::Expected<bool> SlotKeeper::read_grant(HeldSlot& held) {
    const std::string name = held.hold.lease;
    auto current = m_client.get(kubeapi::leases_resource(), m_ns, name);
    if (!current) {
        if (current.error().code() == util::ErrorCode::not_found) {
            held.lost = "it is gone (the coordinator frees a slot not renewed within its lease)";
            held.gone = true;
            return false;
        }
        return std::unexpected(
            std::move(current.error()).with_context("reading rollout slot " + name));
    }
    const model::SlotLease seen = model::slot_lease_of(*current);
    if (auto why = why_not_held(seen, held, m_me)) {
        held.lost = *why;
        held.gone = seen.holder != m_me || seen.grant != held.hold.grant;
        return false;
    }
    held.lease = std::move(*current);
    held.lost.clear(); // a revoke withdrawn since
    return true;
}

namespace {

// The grants (grant ids) this process released as done. A release tells the coordinator to free
// the slot now, not after a revoke has stood for slot_timing::revoked_for, so a grant released is
// never this node's again: a node that took it back from a view older than the release (its
// watch, or a quorum read before the coordinator acted on it) would hold a slot the coordinator
// is handing to another node. A grant made anew has another id. Process-wide because the daemon
// takes slots from two places (its watch and the reconcile) through keepers of their own.
class ReleasedGrants {
public:
    // `why`: the last failure of a write about the slot, if any (a take the API server refused).
    void add(const std::string& grant, const std::string& why) {
        std::lock_guard lock(m_mutex);
        if (m_grants.contains(grant)) {
            if (!why.empty()) {
                m_grants[grant] = why;
            }
            return;
        }
        if (m_order.size() == k_kept) {
            m_grants.erase(m_order.front());
            m_order.pop_front();
        }
        m_grants.emplace(grant, why);
        m_order.push_back(grant);
    }
    bool contains(const std::string& grant) const {
        std::lock_guard lock(m_mutex);
        return m_grants.contains(grant);
    }
    std::optional<std::string> why(const std::string& grant) const {
        std::lock_guard lock(m_mutex);
        auto found = m_grants.find(grant);
        return found == m_grants.end() ? std::nullopt : std::optional(found->second);
    }

private:
    // A node takes a few slots a rollout; far more than any view can lag behind.
    static constexpr std::size_t k_kept = 256;
    mutable std::mutex m_mutex;
    std::map<std::string, std::string> m_grants; // grant -> the last failure about it
    std::deque<std::string> m_order;
};

ReleasedGrants& released_by_this_process() {
    static ReleasedGrants grants;
    return grants;
}

} // namespace

std::optional<HeldSlot> SlotKeeper::adopt(const model::RolloutTarget& target,
                                          const model::SlotDecision& decision,
                                          std::chrono::steady_clock::time_point seen) {
    const model::SlotLease& grant = decision.existing->lease;
    if (released_by_this_process().contains(grant.grant)) {
        return std::nullopt;
    }
    HeldSlot held{target, grant.object, {}, {}, {}};
    held.adopted = seen;
    held.hold = model::SlotHold{
        target.shim, grant.name,        grant.grant,
        target.uid,  target.generation, kubeapi::micro_time(std::chrono::system_clock::now())};
    return held;
}

util::Expected<std::optional<HeldSlot>> SlotKeeper::take(const model::RolloutTarget& target,
                                                         const model::SlotDecision& decision) {
    auto held = adopt(target, decision, std::chrono::steady_clock::now());
    if (!held) {
        return std::nullopt;
    }
    if (auto taken = renew(*held); !taken) {
        if (!held->lost.empty()) {
            return std::nullopt; // written, then read: no longer this node's
        }
        return std::unexpected(std::move(taken.error()));
    }
    return held;
}

std::optional<std::string> SlotKeeper::given_back(const model::SlotLease& grant) {
    return released_by_this_process().why(grant.grant);
}

std::optional<std::string> why_slot_not_fresh(const HeldSlot& held,
                                              std::chrono::steady_clock::time_point now) {
    const std::string name = kubeapi::name_of(held.lease);
    if (!held.lost.empty()) {
        return "rollout slot " + name + " is no longer this node's: " + held.lost;
    }
    if (!held.taken()) {
        const auto age = now - held.adopted;
        if (age < model::slot_timing::fresh_for) {
            return std::nullopt;
        }
        return "rollout slot " + name + " was seen granted to this node " +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
               " s ago and not taken since: it may be another node's by now";
    }
    const auto age = now - held.confirmed;
    if (age >= model::slot_timing::fresh_for) {
        return "rollout slot " + name + " was last confirmed by the API server " +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
               " s ago (lease " + std::to_string(model::slot_timing::lease.count()) +
               " s): it may be another node's by now";
    }
    return std::nullopt;
}

std::optional<std::string> why_slot_not_committed(const HeldSlot& held,
                                                  std::chrono::steady_clock::time_point now) {
    if (auto why = why_slot_not_fresh(held, now)) {
        return why;
    }
    if (held.confirmed_committing.count() <= 0) {
        return "the API server has not confirmed this node's mark on rollout slot " +
               kubeapi::name_of(held.lease) +
               " that it is past its point of no return: it may be another node's by the time "
               "the change ends" +
               (held.last_failure.empty() ? std::string() : " (" + held.last_failure + ")");
    }
    return std::nullopt;
}

bool renewal_due(const HeldSlot& held, bool changing, std::chrono::steady_clock::time_point now) {
    if (!changing || !held.taken() || held.confirmed_committing.count() <= 0 ||
        held.committing > held.confirmed_committing) {
        return true;
    }
    return now - held.confirmed >=
           std::min(held.confirmed_committing, model::k_max_commit_allowance);
}

model::SlotHold SlotKeeper::released_hold(const HeldSlot& held) {
    model::SlotHold hold = held.hold;
    hold.done = true;
    // Before the write: a write that fails may still have reached the API server.
    released_by_this_process().add(hold.grant, held.last_failure);
    return hold;
}

util::Expected<void> SlotKeeper::release(const HeldSlot& held) {
    return write(released_hold(held), "releasing");
}

util::Expected<std::string> SlotKeeper::fail(const HeldSlot& held, const std::string& reason) {
    model::SlotHold hold = held.hold;
    hold.failed = short_reason(reason);
    TRY(write(hold, "marking failed"));
    return hold.lease;
}

model::SlotHold SlotKeeper::renewed_hold(const HeldSlot& held) {
    model::SlotHold hold = held.hold;
    hold.renewed = kubeapi::micro_time(std::chrono::system_clock::now());
    hold.committing = held.committing;
    return hold;
}

util::Expected<void> SlotKeeper::renew(HeldSlot& held) {
    const model::SlotHold hold = renewed_hold(held);
    const auto sent = std::chrono::steady_clock::now();
    auto done = write(hold, held.taken() ? "renewing" : "taking");
    if (done) {
        done = confirm_written(held, hold, sent);
    }
    held.last_failure = done ? std::string() : done.error().message();
    return done;
}

util::Expected<void> SlotKeeper::confirm_written(HeldSlot& held, const model::SlotHold& written,
                                                 std::chrono::steady_clock::time_point sent) {
    held.hold = written;
    if (!TRY(read_grant(held))) {
        return util::fail(util::ErrorCode::conflict,
                          std::string(held.taken() ? "renewing" : "taking") + " rollout slot " +
                              written.lease + ": " + held.lost);
    }
    held.confirmed = sent;
    held.confirmed_committing = written.committing;
    return {};
}

SlotRenewal::SlotRenewal(kubeapi::KubeConfig config, std::string ns, std::string me,
                         std::vector<HeldSlot> held, util::Log log)
    : m_client(std::move(config)), m_keeper(m_client, std::move(ns), std::move(me)), m_log(log),
      m_held(std::move(held)),
      m_worker(
          model::slot_timing::renew_every,
          [this](const std::atomic<bool>& stopping) { renew_round(stopping); },
          [this](const std::string& what) {
              m_log.warning("rollout: a renewal round of the rollout slots failed: " + what);
          }) {}

SlotRenewal::~SlotRenewal() {
    stop();
}

std::vector<HeldSlot> SlotRenewal::stop() {
    m_worker.stop();
    std::lock_guard lock(m_mutex);
    m_stopped = true;
    m_round_ended.notify_all();
    return m_held;
}

std::vector<HeldSlot> SlotRenewal::held() const {
    std::lock_guard lock(m_mutex);
    return m_held;
}

std::vector<HeldSlot> SlotRenewal::renew_committing(std::chrono::seconds allowance,
                                                    std::chrono::milliseconds wait) {
    std::unique_lock lock(m_mutex);
    m_committing = allowance;
    m_committing_confirmed = false;
    m_worker.wake();
    m_round_ended.wait_for(lock, wait, [this] { return m_committing_confirmed || m_stopped; });
    return m_held;
}

void SlotRenewal::changes_begun() {
    std::lock_guard lock(m_mutex);
    m_changes_begun = true;
}

std::vector<HeldSlot> SlotRenewal::Paused::held() const {
    std::lock_guard lock(m_renewal.m_mutex);
    return m_renewal.m_held;
}

void SlotRenewal::Paused::committed(std::vector<HeldSlot> held, std::chrono::seconds allowance) {
    std::lock_guard lock(m_renewal.m_mutex);
    m_renewal.m_held = std::move(held);
    m_renewal.m_committing = allowance;
    m_renewal.m_committing_confirmed = true;
    m_renewal.m_round_ended.notify_all();
}

void SlotRenewal::renew_round(const std::atomic<bool>& stopping) {
    std::lock_guard rounds(m_round);
    // Renewed on a copy, without the lock: a request can hang for as long as the client lets it,
    // and the gate must still read how fresh each slot is meanwhile.
    std::vector<HeldSlot> renewing;
    bool committing_round = false;
    bool changing = false;
    {
        std::lock_guard lock(m_mutex);
        committing_round = m_committing.count() > 0 && !m_committing_confirmed;
        changing = m_changes_begun;
        renewing = m_held;
        for (HeldSlot& held : renewing) {
            held.committing = std::max(held.committing, m_committing);
        }
    }
    m_client.join_pass(std::make_shared<kubeapi::ApiPass>(
        std::function<void()>{}, [&stopping] { return !stopping.load(); }));
    for (HeldSlot& held : renewing) {
        if (stopping) {
            break; // the transaction ended: the gate releases or marks what it holds
        }
        if (held.gone) {
            continue; // deleted or granted anew: renewing it could only fail
        }
        if (!renewal_due(held, changing, std::chrono::steady_clock::now())) {
            continue; // changing, within the allowance its confirmed mark states
        }
        // A failed renewal is retried next period; the slot expires only if every renewal
        // within a lease fails, and then another node may take it: that is the rule, and the
        // gate then stops the transaction before its point of no return.
        if (auto renewed = m_keeper.renew(held); !renewed && !stopping) {
            m_log.warning("rollout: " + renewed.error().message() +
                          (held.lost.empty() ? "" : "; this node no longer holds it"));
        }
    }
    std::lock_guard lock(m_mutex);
    m_held = std::move(renewing);
    if (committing_round) {
        m_committing_confirmed = true; // whatever the answers: the gate judges each slot
        m_round_ended.notify_all();
    }
}

} // namespace shimkeeper::cluster::agent
