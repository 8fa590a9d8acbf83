// /run/shimkeeper/status.json: the daemon's current state for `shimkeeper status`, monitoring
// and people. Rewritten atomically at every state change, so a reader never sees half a file.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <sys/types.h>

namespace shimkeeper::daemon {

// Where `run` writes it and `status` reads it unless --status-file says otherwise.
inline constexpr const char* k_default_status_file = "/run/shimkeeper/status.json";

enum class DaemonState { starting, reconciling, converged, failing, stopping };

const char* to_string(DaemonState state);

using WallTime = std::chrono::system_clock::time_point;

struct DaemonStatus {
    DaemonState state = DaemonState::starting;
    std::string status_line; // what STATUS= says right now
    pid_t pid = 0;
    WallTime started_at{};
    unsigned consecutive_failures = 0;
    std::optional<WallTime> last_attempt;
    std::optional<WallTime> last_success;
    std::optional<WallTime> next_retry;
    std::string last_trigger; // "startup", "change", "retry", "drift check"
    bool last_changed = false;
    nlohmann::json result; // the reconcile callback's ReconcileOutcome::status
};

nlohmann::json to_json(const DaemonStatus& status);

// Creates the file's directory (0755) when missing, then replaces the file atomically (0644).
util::Expected<void> write_status_file(const std::filesystem::path& file,
                                       const DaemonStatus& status);

} // namespace shimkeeper::daemon
