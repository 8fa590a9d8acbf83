#include "shimkeeper/cluster/agent/slot_keeper.hpp"

#include "shimkeeper/kubeapi/conflict_retry.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"

namespace shimkeeper::cluster::agent {

using nlohmann::json;

util::Expected<std::optional<HeldSlot>> SlotKeeper::take(const model::RolloutTarget& target,
                                                         const model::SlotDecision& decision) {
    const std::string now = kubeapi::micro_time(std::chrono::system_clock::now());
    const json* existing = decision.existing ? &decision.existing->lease.object : nullptr;
    json lease = model::slot_lease_for(target, decision.index, m_me, m_duration, now, existing);
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
    return HeldSlot{target, std::move(*written)};
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
    return release(HeldSlot{held.target, std::move(*current)});
}

util::Expected<void> SlotKeeper::fail(const HeldSlot& held, const std::string& reason) {
    const std::string name = kubeapi::name_of(held.lease);
    // An annotation value is not limited by the API, but a reason need not be a novel.
    const std::string text = reason.size() > 1000 ? reason.substr(0, 1000) + "..." : reason;
    auto marked = kubeapi::update_with_retry(
        m_client, kubeapi::leases_resource(), m_ns, name,
        [&](json& lease) -> util::Expected<kubeapi::Changed> {
            const model::SlotLease seen = model::slot_lease_of(lease);
            if (seen.holder != m_me || seen.uid != held.target.uid) {
                return kubeapi::Changed::no; // expired and taken over: nothing of ours to mark
            }
            lease["metadata"]["annotations"][model::k_slot_failed_key] = text;
            lease["spec"]["renewTime"] = kubeapi::micro_time(std::chrono::system_clock::now());
            return kubeapi::Changed::yes;
        });
    if (!marked) {
        return std::unexpected(
            std::move(marked.error()).with_context("marking rollout slot " + name + " failed"));
    }
    return {};
}

util::Expected<void> SlotKeeper::renew(HeldSlot& held) {
    json lease = held.lease;
    lease["spec"]["renewTime"] = kubeapi::micro_time(std::chrono::system_clock::now());
    auto written = m_client.update(kubeapi::leases_resource(), m_ns, lease);
    if (!written) {
        return std::unexpected(
            std::move(written.error())
                .with_context("renewing rollout slot " + kubeapi::name_of(lease)));
    }
    held.lease = std::move(*written);
    return {};
}

SlotRenewal::SlotRenewal(kubeapi::KubeConfig config, std::string ns, std::string me,
                         std::chrono::seconds duration, std::vector<HeldSlot> held, util::Log log)
    : m_client(std::move(config)), m_keeper(m_client, std::move(ns), std::move(me), duration),
      m_log(log), m_held(std::move(held)) {
    m_thread = std::thread([this] { loop(); });
}

SlotRenewal::~SlotRenewal() {
    stop();
}

std::vector<HeldSlot> SlotRenewal::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    std::lock_guard lock(m_mutex);
    return m_held;
}

void SlotRenewal::loop() {
    const auto period =
        std::chrono::duration_cast<std::chrono::milliseconds>(m_keeper.duration()) / 3;
    std::unique_lock lock(m_mutex);
    while (!m_wake.wait_for(lock, period, [this] { return m_stopping; })) {
        for (HeldSlot& held : m_held) {
            // A failed renewal is retried next period; the slot expires only if every renewal
            // within a lease duration fails, and then another node may take it: that is the rule.
            if (auto renewed = m_keeper.renew(held); !renewed) {
                m_log.warning("rollout: " + renewed.error().message());
            }
        }
    }
}

} // namespace shimkeeper::cluster::agent
