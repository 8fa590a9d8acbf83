// A hand-written SystemdManager for logic tests (transaction, daemon, restart guard): it records
// every call and answers from a script. Without a script a restart succeeds (`done`) and the unit
// becomes active/running with a new InvocationID and ActiveEnterTimestamp, like real systemd.
#pragma once

#include "shimkeeper/systemd/clock.hpp"
#include "shimkeeper/systemd/manager.hpp"

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::testing {

class FakeSystemdManager final : public systemd::SystemdManager {
public:
    enum class CallKind { restart_unit, unit_state, reset_failed };
    struct Call {
        CallKind kind;
        std::string unit;
    };
    // One scripted restart: what restart_unit returns, and the state the unit is left in
    // (nullopt: active/running with a new invocation when done, failed/exit-code otherwise).
    struct ScriptedRestart {
        util::Expected<systemd::JobResult> result = systemd::JobResult::done;
        std::optional<systemd::UnitState> state_after;
    };

    // Adds a unit with systemd's default start limit (5 starts in 10 s), active and running.
    systemd::UnitState& add_unit(const std::string& unit) {
        systemd::UnitState state;
        state.active_state = "active";
        state.sub_state = "running";
        state.result = "success";
        state.invocation_id = next_invocation();
        state.active_enter_timestamp_us = ++m_timestamp;
        state.start_limit_interval_us = 10'000'000;
        state.start_limit_burst = 5;
        return m_units[unit] = state;
    }
    systemd::UnitState& unit(const std::string& unit) { return m_units.at(unit); }

    void script_restart(ScriptedRestart restart) { m_script.push_back(std::move(restart)); }

    util::Expected<systemd::JobResult> restart_unit(const std::string& unit,
                                                    std::chrono::milliseconds timeout) override {
        calls.push_back({CallKind::restart_unit, unit});
        if (unreachable) {
            return std::unexpected(*unreachable);
        }
        last_timeout = timeout;
        const auto found = m_units.find(unit);
        if (found == m_units.end()) {
            return not_found(unit);
        }
        ScriptedRestart next;
        if (!m_script.empty()) {
            next = std::move(m_script.front());
            m_script.pop_front();
        }
        if (next.state_after) {
            found->second = *next.state_after;
        } else if (next.result && *next.result == systemd::JobResult::done) {
            found->second.active_state = "active";
            found->second.sub_state = "running";
            found->second.result = "success";
            found->second.invocation_id = next_invocation();
            found->second.active_enter_timestamp_us = ++m_timestamp;
        } else if (next.result) {
            found->second.active_state = "failed";
            found->second.sub_state = "failed";
            found->second.result = "exit-code";
        }
        return next.result;
    }

    util::Expected<systemd::UnitState> unit_state(const std::string& unit) override {
        calls.push_back({CallKind::unit_state, unit});
        if (unreachable) {
            return std::unexpected(*unreachable);
        }
        const auto found = m_units.find(unit);
        if (found == m_units.end()) {
            return not_found(unit);
        }
        return found->second;
    }

    util::Expected<void> reset_failed(const std::string& unit) override {
        calls.push_back({CallKind::reset_failed, unit});
        if (unreachable) {
            return std::unexpected(*unreachable);
        }
        const auto found = m_units.find(unit);
        if (found == m_units.end()) {
            return not_found(unit);
        }
        if (found->second.active_state == "failed") {
            found->second.active_state = "inactive";
            found->second.sub_state = "dead";
            found->second.result = "success";
        }
        return {};
    }

    int count(CallKind kind, const std::string& unit) const {
        int n = 0;
        for (const auto& call : calls) {
            n += call.kind == kind && call.unit == unit ? 1 : 0;
        }
        return n;
    }
    int restarts(const std::string& unit) const { return count(CallKind::restart_unit, unit); }

    std::vector<Call> calls;
    std::chrono::milliseconds last_timeout{0};
    std::optional<util::Error> unreachable; // set: every call fails with it, like a dead bus

private:
    static std::unexpected<util::Error> not_found(const std::string& unit) {
        return util::fail(util::ErrorCode::not_found,
                          "systemd RestartUnit failed: org.freedesktop.systemd1.NoSuchUnit: Unit " +
                              unit + " not found.");
    }
    std::string next_invocation() {
        char id[33];
        std::snprintf(id, sizeof id, "%032llx", static_cast<unsigned long long>(++m_invocations));
        return id;
    }

    std::map<std::string, systemd::UnitState> m_units;
    std::deque<ScriptedRestart> m_script;
    std::uint64_t m_invocations = 0;
    std::uint64_t m_timestamp = 1'700'000'000'000'000;
};

// A clock that never waits: sleep_until jumps to the deadline and records how long it "slept".
class FakeClock final : public systemd::Clock {
public:
    explicit FakeClock(time_point start = time_point(std::chrono::hours(24 * 365 * 50)))
        : m_now(start) {}

    time_point now() const override { return m_now; }
    void sleep_until(time_point when) override {
        sleeps.push_back(when - m_now);
        if (when > m_now) {
            m_now = when;
        }
    }
    void advance(std::chrono::nanoseconds by) { m_now += by; }

    std::vector<std::chrono::nanoseconds> sleeps;

private:
    time_point m_now;
};

} // namespace shimkeeper::testing
