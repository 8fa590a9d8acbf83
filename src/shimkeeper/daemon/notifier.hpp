// What the daemon tells the world about itself: systemd through sd_notify (READY=1, STATUS=,
// STOPPING=1, WATCHDOG=1), the journal through the Log, and the status file. The loop reports
// events here; this class turns them into those three views so they never disagree.
#pragma once

#include "shimkeeper/daemon/daemon.hpp"
#include "shimkeeper/daemon/schedule.hpp"
#include "shimkeeper/daemon/status_file.hpp"
#include "shimkeeper/util/log.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace shimkeeper::daemon {

class Notifier {
public:
    Notifier(std::filesystem::path status_file, const util::Log& log);

    // Whether systemd expects WATCHDOG=1 (sd-event pings it while the loop idles; we add one
    // before every attempt so a reconcile gets the whole WatchdogSec).
    void set_watchdog(bool enabled) { m_watchdog = enabled; }

    void attempt_started(Trigger why);
    void attempt_finished(Trigger why, const ReconcileOutcome& outcome, unsigned failures,
                          std::optional<std::chrono::milliseconds> retry_in);
    // READY=1 with the current STATUS=, after the startup attempt.
    void ready();
    void stopping(int signal);

    const DaemonStatus& status() const { return m_status; }

private:
    // Sends `fields` plus STATUS= when the line changed, then rewrites the status file.
    void publish(const std::string& fields);

    std::filesystem::path m_status_file;
    const util::Log& m_log;
    DaemonStatus m_status;
    std::string m_sent_status;
    bool m_watchdog = false;
};

} // namespace shimkeeper::daemon
