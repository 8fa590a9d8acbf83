#include "shimkeeper/daemon/notifier.hpp"

#include "shimkeeper/daemon/status_text.hpp"

#include <csignal>
#include <cstring>
#include <systemd/sd-daemon.h>
#include <unistd.h>

namespace shimkeeper::daemon {

Notifier::Notifier(std::filesystem::path status_file, const util::Log& log)
    : m_status_file(std::move(status_file)), m_log(log) {
    m_status.pid = ::getpid();
    m_status.started_at = std::chrono::system_clock::now();
    m_status.status_line = "starting";
}

void Notifier::attempt_started(Trigger why) {
    if (m_watchdog) {
        sd_notify(0, "WATCHDOG=1");
    }
    m_status.last_attempt = std::chrono::system_clock::now();
    m_status.last_trigger = to_string(why);
    if (why == Trigger::drift) {
        // A periodic check is not news: keep the converged/failing line a person reads.
        return;
    }
    m_status.state = why == Trigger::startup ? DaemonState::starting : DaemonState::reconciling;
    m_status.status_line = why == Trigger::startup
                               ? "starting: recovering and reconciling"
                               : std::string("reconciling (") + to_string(why) + ")";
    publish("");
}

void Notifier::attempt_finished(Trigger why, const ReconcileOutcome& outcome, unsigned failures,
                                std::optional<std::chrono::milliseconds> retry_in) {
    auto now = std::chrono::system_clock::now();
    bool was_failing = m_status.consecutive_failures > 0;
    m_status.consecutive_failures = failures;
    m_status.last_changed = outcome.changed;
    m_status.result = outcome.status;
    std::string trigger = to_string(why);
    if (outcome.ok) {
        m_status.state = DaemonState::converged;
        m_status.last_success = now;
        m_status.next_retry.reset();
        m_status.status_line = one_line(outcome.summary.empty() ? "converged" : outcome.summary);
        if (outcome.changed || was_failing) {
            m_log.info("reconciled (" + trigger + "): " + m_status.status_line);
        } else {
            m_log.debug("nothing to do (" + trigger + "): " + m_status.status_line);
        }
    } else {
        auto wait = retry_in.value_or(std::chrono::milliseconds{0});
        m_status.state = DaemonState::failing;
        m_status.next_retry = now + wait;
        m_status.status_line = failing_status(outcome.summary, wait);
        m_log.error("reconcile failed (" + trigger + ", " + std::to_string(failures) +
                    (failures == 1 ? " failure" : " failures in a row") + "): " +
                    one_line(outcome.summary, 2000) + "; retrying in " + duration_text(wait));
    }
    publish("");
}

void Notifier::ready() {
    publish("READY=1\n");
}

void Notifier::stopping(int signal) {
    const char* name = sigabbrev_np(signal);
    std::string signal_name = name != nullptr ? std::string("SIG") + name : std::to_string(signal);
    m_log.info("received " + signal_name + ", stopping");
    m_status.state = DaemonState::stopping;
    m_status.status_line = "stopping (" + signal_name + ")";
    publish("STOPPING=1\n");
}

void Notifier::publish(const std::string& fields) {
    std::string message = fields;
    if (m_status.status_line != m_sent_status) {
        message += "STATUS=" + m_status.status_line + "\n";
    }
    if (!message.empty()) {
        // Outside systemd (no NOTIFY_SOCKET) this does nothing; a send error is not worth
        // stopping the daemon for, the status file still tells.
        if (sd_notify(0, message.c_str()) >= 0) {
            m_sent_status = m_status.status_line;
        }
    }
    if (auto written = write_status_file(m_status_file, m_status); !written) {
        m_log.warning(written.error().message());
    }
}

} // namespace shimkeeper::daemon
