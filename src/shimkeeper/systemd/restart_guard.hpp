// Restarts a unit without ever tripping systemd's start limit (StartLimitBurst starts within
// StartLimitIntervalUSec fail the unit for good, DESIGN.md "systemd facts"). Before a restart it
// waits until (a) a minimum spacing has passed since the previous restart and (b) this restart,
// added to the restarts of the last interval (kept in a history file shared by every run), leaves
// a start in the budget for systemd's own Restart=. A unit already failed with "start-limit-hit",
// or failing with it, gets ResetFailedUnit once and one more restart: never a loop.
#pragma once

#include "shimkeeper/systemd/clock.hpp"
#include "shimkeeper/systemd/manager.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace shimkeeper::systemd {

struct RestartReport {
    JobResult result = JobResult::done;
    std::chrono::milliseconds waited{0}; // time spent waiting before the restart(s)
    int attempts = 0;                    // RestartUnit calls: 1, or 2 after a reset
    bool cleared_start_limit = false;    // reset_failed was called
    UnitState state;                     // the unit after the last restart

    // "restarted containerd.service: done (waited 1.5 s for the start limit, ...)".
    std::string describe(const std::string& unit) const;
};

struct RestartGuardOptions {
    std::chrono::milliseconds min_spacing{2'000};
    std::chrono::milliseconds job_timeout{90'000}; // systemd's default start timeout
};

class RestartGuard {
public:
    RestartGuard(SystemdManager& manager, Clock& clock, std::filesystem::path history_file,
                 RestartGuardOptions options = {});

    // Errors: the bus or the history file failed. A job that ends other than `done` is a
    // report, not an error: the caller decides (roll back).
    util::Expected<RestartReport> restart(const std::string& unit);

    // Reads the unit's state once, so that a transaction learns that systemd cannot be reached
    // before it changes anything rather than after (when only a rollback is left).
    util::Expected<void> expect_reachable(const std::string& unit);

private:
    // When the next restart of `unit` may happen, given its history and start limit.
    Clock::time_point earliest_restart(const std::vector<Clock::time_point>& history,
                                       const UnitState& state, Clock::time_point now) const;
    util::Expected<void> restart_once(const std::string& unit, const UnitState& state,
                                      RestartReport& report);

    SystemdManager& m_manager;
    Clock& m_clock;
    std::filesystem::path m_history_file;
    RestartGuardOptions m_options;
};

} // namespace shimkeeper::systemd
