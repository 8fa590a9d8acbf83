#include "shimkeeper/kube/leader_election.hpp"

#include "shimkeeper/kube/micro_time.hpp"

namespace shimkeeper::kube {

using nlohmann::json;

json LeaderElector::spec_for_us(const json& old_spec) const {
    std::string now = micro_time(std::chrono::system_clock::now());
    std::string old_holder = old_spec.value("holderIdentity", "");
    json spec = old_spec;
    spec["holderIdentity"] = m_settings.identity;
    spec["leaseDurationSeconds"] = m_settings.lease_duration.count();
    spec["renewTime"] = now;
    if (old_holder != m_settings.identity) {
        spec["acquireTime"] = now;
        spec["leaseTransitions"] = old_spec.value("leaseTransitions", 0) + 1;
    }
    return spec;
}

util::Expected<bool> LeaderElector::create_lease(Clock::time_point now) {
    std::string stamp = micro_time(std::chrono::system_clock::now());
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", m_settings.name}, {"namespace", m_settings.ns}}},
                  {"spec",
                   {{"holderIdentity", m_settings.identity},
                    {"leaseDurationSeconds", m_settings.lease_duration.count()},
                    {"acquireTime", stamp},
                    {"renewTime", stamp},
                    {"leaseTransitions", 0}}}};
    auto created = m_client.create(leases_resource(), m_settings.ns, lease);
    if (!created) {
        if (created.error().code() == util::ErrorCode::conflict) {
            return false; // AlreadyExists: another candidate created it first
        }
        return std::unexpected(std::move(created).error());
    }
    m_observed_record = (*created)["spec"].dump();
    m_observed_holder = m_settings.identity;
    m_observed_at = now;
    m_renewed_at = now;
    return true;
}

util::Expected<bool> LeaderElector::try_acquire_or_renew(Clock::time_point now) {
    auto lease = m_client.get(leases_resource(), m_settings.ns, m_settings.name);
    if (!lease) {
        if (lease.error().code() == util::ErrorCode::not_found) {
            return create_lease(now);
        }
        return std::unexpected(std::move(lease).error());
    }
    json spec = lease->value("spec", json::object());
    std::string record = spec.dump();
    std::string holder = spec.value("holderIdentity", "");
    if (record != m_observed_record) { // the record moved: its lease runs from now, our clock
        m_observed_record = record;
        m_observed_holder = holder;
        m_observed_at = now;
    }
    std::chrono::seconds duration(spec.value("leaseDurationSeconds", 0));
    bool held_by_other = !holder.empty() && holder != m_settings.identity;
    if (held_by_other && now < m_observed_at + duration) {
        return false;
    }
    (*lease)["spec"] = spec_for_us(spec);
    auto written = m_client.update(leases_resource(), m_settings.ns, *lease);
    if (!written) {
        if (written.error().code() == util::ErrorCode::conflict) {
            return false; // another candidate wrote first; we will read its record next round
        }
        return std::unexpected(std::move(written).error());
    }
    m_observed_record = (*written)["spec"].dump();
    m_observed_holder = m_settings.identity;
    m_observed_at = now;
    m_renewed_at = now;
    return true;
}

bool LeaderElector::is_leader(Clock::time_point now) const {
    return m_renewed_at && now < *m_renewed_at + m_settings.renew_deadline;
}

util::Expected<void> LeaderElector::release() {
    if (!m_renewed_at) {
        return {};
    }
    m_renewed_at.reset();
    json lease = TRY(m_client.get(leases_resource(), m_settings.ns, m_settings.name));
    json& spec = lease["spec"];
    if (spec.value("holderIdentity", "") != m_settings.identity) {
        return {}; // someone else holds it already
    }
    std::string now = micro_time(std::chrono::system_clock::now());
    spec["holderIdentity"] = "";
    spec["leaseDurationSeconds"] = 1;
    spec["renewTime"] = now;
    spec["acquireTime"] = now;
    TRY(m_client.update(leases_resource(), m_settings.ns, lease));
    return {};
}

} // namespace shimkeeper::kube
