#include "shimkeeper/kubeapi/leader_election.hpp"

#include "shimkeeper/kubeapi/micro_time.hpp"

namespace shimkeeper::kubeapi {

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

// A merge patch, not a PUT, so that the API server's priority and fairness can tell the
// election from the slot Leases by verb (deploy/helm/shimkeeper/templates/50-flowschema.yaml:
// the coordinator gets and patches no other Lease). Its resourceVersion keeps the PUT's
// precondition: a Lease written since `lease` was read answers 409.
util::Expected<json> LeaderElector::write_spec(ApiClient& client, const json& lease,
                                               const json& spec) const {
    const std::string version =
        lease.value("metadata", json::object()).value("resourceVersion", "");
    if (version.empty()) {
        return util::fail(util::ErrorCode::internal,
                          "the Lease " + m_settings.name + " as read has no resourceVersion");
    }
    json patch = {{"metadata", {{"resourceVersion", version}}}, {"spec", spec}};
    return client.merge_patch(leases_resource(), m_settings.ns, m_settings.name, patch);
}

util::Expected<bool> LeaderElector::create_lease(ApiClient& client, Clock::time_point now) {
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
    auto created = client.create(leases_resource(), m_settings.ns, lease);
    if (!created) {
        if (created.error().code() == util::ErrorCode::conflict) {
            m_known_stale = m_watched; // AlreadyExists: another candidate created it first
            return false;
        }
        return std::unexpected(std::move(created).error());
    }
    m_observed_record = (*created)["spec"].dump();
    m_observed_holder = m_settings.identity;
    m_observed_at = now;
    m_renewed_at = now;
    if (m_watched) {
        m_known = std::move(*created);
    }
    return true;
}

// A record that moved (holder, renewTime, ...) starts its lease anew, on our clock.
void LeaderElector::note_record(const json& spec, Clock::time_point now) {
    std::string record = spec.dump();
    if (record != m_observed_record) {
        m_observed_record = std::move(record);
        m_observed_holder = spec.value("holderIdentity", "");
        m_observed_at = now;
    }
}

util::Expected<bool> LeaderElector::read_and_judge(ApiClient& client, Clock::time_point now) {
    auto lease = client.get(leases_resource(), m_settings.ns, m_settings.name);
    if (!lease) {
        if (lease.error().code() == util::ErrorCode::not_found) {
            m_known.reset();
            m_known_stale = false;
            return create_lease(client, now);
        }
        return std::unexpected(std::move(lease).error());
    }
    if (m_watched) {
        m_known = *lease;
        m_known_stale = false;
    }
    return judge_and_write(client, std::move(*lease), now, false);
}

util::Expected<bool> LeaderElector::judge_and_write(ApiClient& client, json lease,
                                                    Clock::time_point now,
                                                    bool reread_on_conflict) {
    json spec = lease.value("spec", json::object());
    note_record(spec, now);
    std::string holder = spec.value("holderIdentity", "");
    std::chrono::seconds duration(spec.value("leaseDurationSeconds", 0));
    bool held_by_other = !holder.empty() && holder != m_settings.identity;
    if (held_by_other && now < m_observed_at + duration) {
        return false;
    }
    auto written = write_spec(client, lease, spec_for_us(spec));
    if (!written) {
        if (written.error().code() != util::ErrorCode::conflict) {
            // A write that got no answer may have landed: our copy's version may be gone, so
            // the next round reads first (two requests) instead of writing a stale version,
            // reading on its 409 and writing again (three).
            m_known_stale = m_watched;
            return std::unexpected(std::move(written).error());
        }
        // Our copy was older than the Lease. A leader must not lose its term to that: read and
        // judge again now. A candidate lost the race; the watch (or its next read) shows the
        // winner.
        if (reread_on_conflict && holder == m_settings.identity) {
            return read_and_judge(client, now);
        }
        m_known_stale = m_watched;
        return false;
    }
    m_observed_record = (*written)["spec"].dump();
    m_observed_holder = m_settings.identity;
    m_observed_at = now;
    m_renewed_at = now;
    if (m_watched) {
        m_known = std::move(*written);
    }
    return true;
}

util::Expected<bool> LeaderElector::try_acquire_or_renew(ApiClient& client, Clock::time_point now) {
    if (!m_watched || m_known_stale) {
        return read_and_judge(client, now);
    }
    if (!m_known) {
        return create_lease(client, now);
    }
    return judge_and_write(client, *m_known, now, true);
}

void LeaderElector::observe(const std::optional<json>& lease, Clock::time_point now) {
    m_watched = true;
    m_known_stale = false;
    m_known = lease;
    if (lease) {
        note_record(lease->value("spec", json::object()), now);
    }
}

std::chrono::milliseconds LeaderElector::next_round_in(Clock::time_point now) const {
    using std::chrono::milliseconds;
    if (!m_watched || m_known_stale || is_leader(now)) {
        return m_settings.retry_period;
    }
    if (!m_known) {
        return milliseconds(0);
    }
    json spec = m_known->value("spec", json::object());
    std::string holder = spec.value("holderIdentity", "");
    if (holder.empty() || holder == m_settings.identity) {
        return milliseconds(0);
    }
    auto expires = m_observed_at + std::chrono::seconds(spec.value("leaseDurationSeconds", 0));
    return expires <= now ? milliseconds(0)
                          : std::chrono::ceil<milliseconds>(expires - now) + milliseconds(1);
}

bool LeaderElector::is_leader(Clock::time_point now) const {
    return m_renewed_at && now < *m_renewed_at + m_settings.renew_deadline;
}

util::Expected<void> LeaderElector::release(ApiClient& client) {
    if (!m_renewed_at) {
        return {};
    }
    m_renewed_at.reset();
    json lease = TRY(client.get(leases_resource(), m_settings.ns, m_settings.name));
    json& spec = lease["spec"];
    if (spec.value("holderIdentity", "") != m_settings.identity) {
        return {}; // someone else holds it already
    }
    std::string now = micro_time(std::chrono::system_clock::now());
    json vacant = spec;
    vacant["holderIdentity"] = "";
    vacant["leaseDurationSeconds"] = 1;
    vacant["renewTime"] = now;
    vacant["acquireTime"] = now;
    TRY(write_spec(client, lease, vacant));
    return {};
}

} // namespace shimkeeper::kubeapi
