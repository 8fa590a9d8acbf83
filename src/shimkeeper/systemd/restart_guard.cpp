#include "shimkeeper/systemd/restart_guard.hpp"

#include "shimkeeper/systemd/restart_history.hpp"

#include <algorithm>
#include <cstdio>

namespace shimkeeper::systemd {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr std::string_view k_start_limit_hit = "start-limit-hit";

bool start_limit_hit(const UnitState& state) {
    return state.active_state == "failed" && state.result == k_start_limit_hit;
}

std::string seconds(milliseconds ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
    return text;
}

} // namespace

std::string RestartReport::describe(const std::string& unit) const {
    std::string text = "restarted " + unit + ": " + to_string(result);
    if (waited > milliseconds(0)) {
        text += ", waited " + seconds(waited) + " to respect the start limit and spacing";
    }
    if (cleared_start_limit) {
        text += ", cleared start-limit-hit with reset-failed once";
    }
    if (attempts > 1) {
        text += ", " + std::to_string(attempts) + " attempts";
    }
    if (result != JobResult::done) {
        text += " (unit " + state.active_state + "/" + state.sub_state + ", result " +
                state.result + "; see `systemctl status " + unit + "`)";
    }
    return text;
}

RestartGuard::RestartGuard(SystemdManager& manager, Clock& clock,
                           std::filesystem::path history_file, RestartGuardOptions options)
    : m_manager(manager), m_clock(clock), m_history_file(std::move(history_file)),
      m_options(options) {}

util::Expected<void> RestartGuard::expect_reachable(const std::string& unit) {
    TRY(m_manager.unit_state(unit));
    return {};
}

Clock::time_point RestartGuard::earliest_restart(const std::vector<Clock::time_point>& history,
                                                 const UnitState& state,
                                                 Clock::time_point now) const {
    auto earliest = now;
    if (!history.empty()) {
        earliest = std::max(earliest, history.back() + m_options.min_spacing);
    }
    if (state.start_limit_burst == 0 || state.start_limit_interval_us == 0) {
        return earliest; // no start limit on this unit
    }
    // Our restarts may use burst-1 starts per interval; one stays free for systemd's Restart=.
    const std::size_t budget = std::max(1u, state.start_limit_burst - 1);
    const auto interval = microseconds(state.start_limit_interval_us);
    // Restarts still inside the interval at `earliest`, oldest first.
    const auto first_inside = std::ranges::upper_bound(history, earliest - interval);
    const auto inside = static_cast<std::size_t>(std::distance(first_inside, history.end()));
    if (inside < budget) {
        return earliest;
    }
    // Wait until enough of them have left the interval for one more restart to fit.
    const auto must_expire = *(first_inside + static_cast<std::ptrdiff_t>(inside - budget));
    return std::max(earliest, must_expire + interval + microseconds(1));
}

util::Expected<void> RestartGuard::restart_once(const std::string& unit, const UnitState& state,
                                                RestartReport& report) {
    auto history = TRY(RestartHistory::load(m_history_file));
    const auto now = m_clock.now();
    const auto when = earliest_restart(history.of(unit), state, now);
    if (when > now) {
        m_clock.sleep_until(when);
        report.waited += duration_cast<milliseconds>(when - now);
    }
    // Recorded before the restart: a crash in between must still count against the limit.
    history.add(unit, m_clock.now());
    const auto keep = std::max<Clock::time_point::duration>(
        microseconds(state.start_limit_interval_us), m_options.min_spacing);
    history.prune(m_clock.now() - keep);
    TRY(history.save());
    ++report.attempts;
    report.result = TRY(m_manager.restart_unit(unit, m_options.job_timeout));
    report.state = TRY(m_manager.unit_state(unit));
    return {};
}

util::Expected<RestartReport> RestartGuard::restart(const std::string& unit) {
    RestartReport report;
    auto state = TRY(m_manager.unit_state(unit));
    const auto clear_start_limit = [&]() -> util::Expected<void> {
        TRY(m_manager.reset_failed(unit));
        report.cleared_start_limit = true;
        // systemd's counter is reset too; keep only the latest restart for the spacing.
        auto history = TRY(RestartHistory::load(m_history_file));
        history.forget_all_but_latest(unit);
        TRY(history.save());
        return {};
    };

    if (start_limit_hit(state)) {
        TRY(clear_start_limit());
    }
    TRY(restart_once(unit, state, report));
    if (report.result != JobResult::done && start_limit_hit(report.state) &&
        !report.cleared_start_limit) {
        TRY(clear_start_limit());
        TRY(restart_once(unit, state, report));
    }
    return report;
}

} // namespace shimkeeper::systemd
