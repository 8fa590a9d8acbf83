#include "shimkeeper/cluster/agent/slot_keeper.hpp"

#include "shimkeeper/kubeapi/conflict_retry.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"

namespace shimkeeper::cluster::agent {

using nlohmann::json;

util::Expected<std::optional<HeldSlot>> SlotKeeper::take(const model::RolloutTarget& target,
                                                         const model::SlotDecision& decision) {
    const auto sent = std::chrono::steady_clock::now();
    const std::string now = kubeapi::micro_time(std::chrono::system_clock::now());
    const json* existing = decision.existing ? &decision.existing->lease.object : nullptr;
    json lease = model::slot_lease_for(target, decision.index, m_me, model::slot_timing::lease, now,
                                       existing);
    lease["metadata"]["namespace"] = m_ns;
    auto written = existing ? m_client.update(kubeapi::leases_resource(), m_ns, lease)
                            : m_client.create(kubeapi::leases_resource(), m_ns, lease);
    if (!written) {
        if (written.error().code() == util::ErrorCode::conflict ||
            written.error().code() == util::ErrorCode::not_found) {
            return std::nullopt; // someone else was first; the watch shows who
        }
        return std::unexpected(
            std::move(written.error())
                .with_context("taking rollout slot " +
                              model::slot_lease_name(target.shim, decision.index)));
    }
    return HeldSlot{target, std::move(*written), sent, {}};
}

std::optional<std::string> why_slot_not_fresh(const HeldSlot& held,
                                              std::chrono::steady_clock::time_point now) {
    const std::string name = kubeapi::name_of(held.lease);
    if (!held.lost.empty()) {
        return "rollout slot " + name + " is no longer this node's: " + held.lost;
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
    if (model::slot_lease_of(held.lease).committing.count() <= 0) {
        return "the API server has not confirmed this node's mark on rollout slot " +
               kubeapi::name_of(held.lease) +
               " that it is past its point of no return: it may be another node's by the time "
               "the change ends";
    }
    return std::nullopt;
}

bool still_held(const model::SlotLease& current, const HeldSlot& held, const std::string& me) {
    const json::json_pointer acquired("/spec/acquireTime");
    return current.holder == me && current.uid == held.target.uid &&
           current.generation == held.target.generation && current.failed.empty() &&
           current.object.value(acquired, std::string()) ==
               held.lease.value(acquired, std::string());
}

util::Expected<void> SlotKeeper::release(const HeldSlot& held) {
    const std::string name = kubeapi::name_of(held.lease);
    const std::string version =
        held.lease.value(json::json_pointer("/metadata/resourceVersion"), std::string());
    auto removed = m_client.remove(kubeapi::leases_resource(), m_ns, name, version);
    if (removed || removed.error().code() == util::ErrorCode::not_found) {
        return {};
    }
    if (removed.error().code() != util::ErrorCode::conflict) {
        return std::unexpected(
            std::move(removed.error()).with_context("releasing rollout slot " + name));
    }
    // Changed since our last write: delete it only if it is still ours.
    auto current = m_client.get(kubeapi::leases_resource(), m_ns, name);
    if (!current) {
        return current.error().code() == util::ErrorCode::not_found
                   ? util::Expected<void>{}
                   : std::unexpected(
                         std::move(current.error()).with_context("releasing rollout slot " + name));
    }
    if (model::slot_lease_of(*current).holder != m_me) {
        return {};
    }
    return release(HeldSlot{held.target, std::move(*current), held.confirmed, held.lost});
}

util::Expected<std::string> SlotKeeper::fail(const HeldSlot& held, const std::string& reason) {
    const std::string name = kubeapi::name_of(held.lease);
    // An annotation value is not limited by the API, but a reason need not be a novel.
    std::string text = reason;
    if (text.size() > 1000) {
        text.resize(1000);
        text += "...";
    }
    bool ours = false;
    auto marked = kubeapi::update_with_retry(
        m_client, kubeapi::leases_resource(), m_ns, name,
        [&](json& lease) -> util::Expected<kubeapi::Changed> {
            ours = model::slot_lease_of(lease).holder == m_me &&
                   model::slot_lease_of(lease).uid == held.target.uid;
            if (!ours) {
                return kubeapi::Changed::no; // expired and taken over: a marker of its own below
            }
            lease["metadata"]["annotations"][model::k_slot_failed_key] = text;
            lease["spec"]["renewTime"] = kubeapi::micro_time(std::chrono::system_clock::now());
            return kubeapi::Changed::yes;
        });
    if (marked && ours) {
        return name;
    }
    if (!marked && marked.error().code() != util::ErrorCode::not_found) {
        return std::unexpected(
            std::move(marked.error()).with_context("marking rollout slot " + name + " failed"));
    }
    return mark_failed_elsewhere(held, text);
}

util::Expected<std::string> SlotKeeper::mark_failed_elsewhere(const HeldSlot& held,
                                                              const std::string& text) {
    const int own = model::slot_index_of(kubeapi::name_of(held.lease));
    const int first_extra = std::max(held.target.slots, own + 1);
    constexpr int k_extra_names = 64;
    for (int k = -1; k < k_extra_names; ++k) {
        const int index = k < 0 ? own : first_extra + k;
        if (index < 0) {
            continue;
        }
        const std::string now = kubeapi::micro_time(std::chrono::system_clock::now());
        json lease = model::slot_lease_for(held.target, index, m_me, model::slot_timing::lease, now,
                                           nullptr);
        lease["metadata"]["namespace"] = m_ns;
        lease["metadata"]["annotations"][model::k_slot_failed_key] = text;
        auto created = m_client.create(kubeapi::leases_resource(), m_ns, lease);
        if (created) {
            return kubeapi::name_of(*created);
        }
        if (created.error().code() != util::ErrorCode::conflict) {
            return std::unexpected(
                std::move(created.error())
                    .with_context("marking the rollout of Shim/" + held.target.shim + " failed"));
        }
    }
    return util::fail(
        util::ErrorCode::conflict,
        "marking the rollout of Shim/" + held.target.shim + " failed: every name up to " +
            model::slot_lease_name(held.target.shim, first_extra + k_extra_names - 1) + " exists");
}

util::Expected<void> SlotKeeper::renew(HeldSlot& held) {
    const std::string name = kubeapi::name_of(held.lease);
    for (int attempt = 1;; ++attempt) {
        const auto sent = std::chrono::steady_clock::now();
        json lease = held.lease;
        lease["spec"]["renewTime"] = kubeapi::micro_time(std::chrono::system_clock::now());
        if (held.committing.count() > 0) {
            lease["metadata"]["annotations"][model::k_slot_committing_key] =
                std::to_string(held.committing.count());
        }
        auto written = m_client.update(kubeapi::leases_resource(), m_ns, lease);
        if (written) {
            held.lease = std::move(*written);
            held.confirmed = sent;
            return {};
        }
        const util::ErrorCode code = written.error().code();
        if (code == util::ErrorCode::not_found) {
            held.lost = "it is gone (the coordinator frees a slot not renewed within its lease)";
            return std::unexpected(
                std::move(written.error()).with_context("renewing rollout slot " + name));
        }
        if (code != util::ErrorCode::conflict || attempt == 2) {
            return std::unexpected(
                std::move(written.error()).with_context("renewing rollout slot " + name));
        }
        // A 409: someone wrote it since this node's last confirmed write. This node itself, when
        // a renewal's answer was lost: then the Lease is still the one taken, and its version
        // is adopted. Anyone else: it is lost.
        auto current = m_client.get(kubeapi::leases_resource(), m_ns, name);
        if (!current) {
            if (current.error().code() == util::ErrorCode::not_found) {
                held.lost =
                    "it is gone (the coordinator frees a slot not renewed within its lease)";
            }
            return std::unexpected(
                std::move(current.error()).with_context("renewing rollout slot " + name));
        }
        const model::SlotLease seen = model::slot_lease_of(*current);
        if (!still_held(seen, held, m_me)) {
            held.lost = seen.holder == m_me ? "it was taken again or marked failed since"
                                            : "node " + seen.holder + " holds it now";
            return util::fail(util::ErrorCode::conflict,
                              "renewing rollout slot " + name + ": " + held.lost);
        }
        held.lease = std::move(*current);
    }
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

void SlotRenewal::renew_round(const std::atomic<bool>& stopping) {
    // Renewed on a copy, without the lock: a request can hang for as long as the client lets it,
    // and the gate must still read how fresh each slot is meanwhile.
    std::vector<HeldSlot> renewing;
    bool committing_round = false;
    {
        std::lock_guard lock(m_mutex);
        committing_round = m_committing.count() > 0 && !m_committing_confirmed;
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
        if (!held.lost.empty()) {
            continue; // another node's now: writing it again could only fail
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
