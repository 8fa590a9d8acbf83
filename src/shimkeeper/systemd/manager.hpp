// The systemd seam: what shimkeeper asks of the service manager. The real implementation talks
// sd-bus (sdbus_manager.cpp); logic tests use tests/support/fake_systemd.hpp.
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::systemd {

// How systemd finished a job (the JobRemoved signal's result string).
enum class JobResult { done, canceled, timeout, failed, dependency, skipped };

const char* to_string(JobResult result);
std::optional<JobResult> parse_job_result(std::string_view text);

// Unit and service properties as systemd reports them (`systemctl show` names in comments).
struct UnitState {
    std::string active_state;                    // ActiveState: active, failed, activating...
    std::string sub_state;                       // SubState: running, dead, auto-restart...
    std::string result;                          // Result: success, exit-code, start-limit-hit...
    std::string invocation_id;                   // InvocationID, 32 hex digits; new per start
    std::uint64_t active_enter_timestamp_us = 0; // ActiveEnterTimestamp, realtime µs
    std::uint32_t n_restarts = 0;                // NRestarts: automatic restarts only
    int exec_main_status = 0;                    // ExecMainStatus
    std::uint64_t start_limit_interval_us = 0;   // StartLimitIntervalUSec
    unsigned start_limit_burst = 0;              // StartLimitBurst
};

class SystemdManager {
public:
    virtual ~SystemdManager() = default;

    // RestartUnit(unit, "replace") and waits up to `timeout` for that job to finish. For a
    // Type=notify unit the job finishes when the service sends READY=1.
    virtual util::Expected<JobResult> restart_unit(const std::string& unit,
                                                   std::chrono::milliseconds timeout) = 0;
    // A not-found unit is an error (ErrorCode::not_found), not an empty state.
    virtual util::Expected<UnitState> unit_state(const std::string& unit) = 0;
    // ResetFailedUnit: clears the failed state and the start rate limiter.
    virtual util::Expected<void> reset_failed(const std::string& unit) = 0;
};

// The system bus, or the calling user's session bus for a user manager (sandboxes and tests:
// DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus).
// Returns once the bus handshake is through and systemd sends us its job signals.
util::Expected<std::unique_ptr<SystemdManager>> connect_systemd(spec::BusKind bus);

// True for the errno values of a connection that is gone (the peer closed or reset it).
bool is_connection_lost(int err);

} // namespace shimkeeper::systemd
