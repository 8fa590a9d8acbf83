// SystemdManager over sd-bus. A restart is observed the way systemctl does it: subscribe to the
// manager's signals and add the JobRemoved match BEFORE RestartUnit, so that a job finishing
// right after it is enqueued cannot be missed; then wait for the signal naming our job path.
#include "shimkeeper/systemd/manager.hpp"

#include "shimkeeper/systemd/sdbus_error.hpp"
#include "shimkeeper/systemd/sdbus_handles.hpp"
#include "shimkeeper/systemd/sdbus_properties.hpp"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <thread>

namespace shimkeeper::systemd {

namespace {

using std::chrono::steady_clock;

// Results of every job that finished while we listened: job object path -> result.
using FinishedJobs = std::map<std::string, std::string>;

int on_job_removed(sd_bus_message* message, void* userdata, sd_bus_error* /*error*/) {
    std::uint32_t id = 0;
    const char* job = nullptr;
    const char* unit = nullptr;
    const char* result = nullptr;
    if (sd_bus_message_read(message, "uoss", &id, &job, &unit, &result) >= 0) {
        static_cast<FinishedJobs*>(userdata)->insert_or_assign(job, result);
    }
    return 0; // let other handlers see it too
}

class SdBusManager final : public SystemdManager {
public:
    explicit SdBusManager(BusPtr bus) : m_bus(std::move(bus)) {}

    util::Expected<JobResult> restart_unit(const std::string& unit,
                                           std::chrono::milliseconds timeout) override;
    util::Expected<UnitState> unit_state(const std::string& unit) override;
    util::Expected<void> reset_failed(const std::string& unit) override;
    // Asks systemd for its job signals; idempotent.
    util::Expected<void> subscribe();

private:
    util::Expected<JobResult> wait_for_job(const std::string& unit, const std::string& job,
                                           const FinishedJobs& finished,
                                           steady_clock::time_point deadline);

    BusPtr m_bus;
    bool m_subscribed = false;
};

util::Expected<void> SdBusManager::subscribe() {
    if (m_subscribed) {
        return {};
    }
    // Without Subscribe() systemd does not emit JobRemoved to us.
    BusError error;
    const int rc = sd_bus_call_method(m_bus.get(), k_systemd_destination, k_systemd_path,
                                      k_manager_interface, "Subscribe", error.get(), nullptr, "");
    if (rc < 0) {
        return std::unexpected(bus_error("Subscribe()", rc, error));
    }
    m_subscribed = true;
    return {};
}

util::Expected<JobResult> SdBusManager::restart_unit(const std::string& unit,
                                                     std::chrono::milliseconds timeout) {
    const auto deadline = steady_clock::now() + timeout;
    TRY(subscribe());

    FinishedJobs finished;
    sd_bus_slot* raw_slot = nullptr;
    int rc = sd_bus_match_signal(m_bus.get(), &raw_slot, k_systemd_destination, k_systemd_path,
                                 k_manager_interface, "JobRemoved", on_job_removed, &finished);
    const SlotPtr slot(raw_slot); // removes the match before `finished` goes away
    if (rc < 0) {
        return std::unexpected(bus_error("adding the JobRemoved match", rc));
    }

    BusError error;
    sd_bus_message* raw_reply = nullptr;
    rc = sd_bus_call_method(m_bus.get(), k_systemd_destination, k_systemd_path, k_manager_interface,
                            "RestartUnit", error.get(), &raw_reply, "ss", unit.c_str(), "replace");
    const MessagePtr reply(raw_reply);
    if (rc < 0) {
        return std::unexpected(bus_error("RestartUnit(" + unit + ", replace)", rc, error));
    }
    const char* job = nullptr;
    rc = sd_bus_message_read(reply.get(), "o", &job);
    if (rc < 0) {
        return std::unexpected(bus_error("reading the job of RestartUnit(" + unit + ")", rc));
    }
    return wait_for_job(unit, job, finished, deadline);
}

util::Expected<JobResult> SdBusManager::wait_for_job(const std::string& unit,
                                                     const std::string& job,
                                                     const FinishedJobs& finished,
                                                     steady_clock::time_point deadline) {
    for (;;) {
        if (const auto it = finished.find(job); it != finished.end()) {
            if (const auto result = parse_job_result(it->second)) {
                return *result;
            }
            return util::fail(util::ErrorCode::external, "systemd finished the restart job of " +
                                                             unit + " with an unknown result \"" +
                                                             it->second + "\"");
        }
        // Dispatch everything queued (the signal may already sit in the read queue).
        const int processed = sd_bus_process(m_bus.get(), nullptr);
        if (processed < 0) {
            return std::unexpected(bus_error("waiting for the restart job of " + unit, processed));
        }
        if (processed > 0) {
            continue;
        }
        const auto now = steady_clock::now();
        if (now >= deadline) {
            return util::fail(util::ErrorCode::external,
                              "the restart of " + unit + " (job " + job +
                                  ") did not finish in time; see `systemctl status " + unit + "`");
        }
        const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
        const int rc = sd_bus_wait(m_bus.get(), static_cast<std::uint64_t>(left.count()));
        if (rc < 0 && rc != -EINTR) {
            return std::unexpected(bus_error("waiting for the restart job of " + unit, rc));
        }
    }
}

util::Expected<UnitState> SdBusManager::unit_state(const std::string& unit) {
    const PropertyReader unit_props{m_bus.get(), TRY(load_unit_path(m_bus.get(), unit)), unit};
    UnitState state;
    state.active_state = TRY(unit_props.string(k_unit_interface, "ActiveState"));
    state.sub_state = TRY(unit_props.string(k_unit_interface, "SubState"));
    state.invocation_id = TRY(unit_props.id128(k_unit_interface, "InvocationID"));
    state.active_enter_timestamp_us = TRY(unit_props.u64(k_unit_interface, "ActiveEnterTimestamp"));
    state.start_limit_interval_us = TRY(unit_props.u64(k_unit_interface, "StartLimitIntervalUSec"));
    state.start_limit_burst = TRY(unit_props.u32(k_unit_interface, "StartLimitBurst"));
    // Result, NRestarts and ExecMainStatus exist on services only.
    if (unit.ends_with(".service")) {
        state.result = TRY(unit_props.string(k_service_interface, "Result"));
        state.n_restarts = TRY(unit_props.u32(k_service_interface, "NRestarts"));
        state.exec_main_status = TRY(unit_props.i32(k_service_interface, "ExecMainStatus"));
    }
    return state;
}

util::Expected<void> SdBusManager::reset_failed(const std::string& unit) {
    BusError error;
    const int rc =
        sd_bus_call_method(m_bus.get(), k_systemd_destination, k_systemd_path, k_manager_interface,
                           "ResetFailedUnit", error.get(), nullptr, "s", unit.c_str());
    if (rc < 0) {
        return std::unexpected(bus_error("ResetFailedUnit(" + unit + ")", rc, error));
    }
    return {};
}

std::string env_or(const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : fallback;
}

util::Expected<BusPtr> open_bus(spec::BusKind bus) {
    sd_bus* raw = nullptr;
    const int rc = bus == spec::BusKind::user ? sd_bus_open_user(&raw) : sd_bus_open_system(&raw);
    BusPtr owned(raw);
    if (rc < 0) {
        if (bus == spec::BusKind::user) {
            return std::unexpected(
                bus_error("connecting to the user bus (DBUS_SESSION_BUS_ADDRESS=" +
                              env_or("DBUS_SESSION_BUS_ADDRESS", "unset") +
                              ", XDG_RUNTIME_DIR=" + env_or("XDG_RUNTIME_DIR", "unset") + ")",
                          rc));
        }
        return std::unexpected(
            bus_error("connecting to the system bus (is systemd running? for a user manager "
                      "set [systemd] bus = \"user\" in the agent config)",
                      rc));
    }
    return owned;
}

util::Expected<std::unique_ptr<SystemdManager>> open_subscribed(spec::BusKind bus) {
    auto manager = std::make_unique<SdBusManager>(TRY(open_bus(bus)));
    TRY(manager->subscribe());
    return manager;
}

} // namespace

util::Expected<std::unique_ptr<SystemdManager>> connect_systemd(spec::BusKind bus) {
    // sd-bus writes its handshake while opening and finishes it on the first call, so a
    // connection the bus drops shows as EPIPE from the open or ENOTCONN from Subscribe(). Under
    // load dbus-daemon was seen dropping fresh connections twice in a row; nothing was asked of
    // systemd yet, so opening again is harmless.
    constexpr int k_attempts = 5;
    for (int attempt = 1;; ++attempt) {
        auto connected = open_subscribed(bus);
        if (connected || attempt == k_attempts ||
            !is_connection_lost(connected.error().sys_errno())) {
            return connected;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
    }
}

} // namespace shimkeeper::systemd
