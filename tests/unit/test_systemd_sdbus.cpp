// The sd-bus edge against a real systemd user manager running a real containerd. Runs only inside
// tests/node/systemd_sdbus.sh, which brings up the node harness, adds the test units named below
// and sets SHIMKEEPER_TEST_USER_BUS=1; skipped everywhere else.
#include "shimkeeper/systemd/manager.hpp"
#include "shimkeeper/systemd/restart_guard.hpp"
#include "shimkeeper/util/fs.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <string>

namespace shimkeeper::systemd {
namespace {
namespace systemd_sdbus {

using namespace std::chrono_literals;

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

// What `systemctl --user show` says, to compare our reading with systemd's own tool.
std::string systemctl_show(const std::string& unit, const std::string& property) {
    const std::string command =
        "systemctl --user show -p " + property + " --value " + unit + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    std::string out;
    std::array<char, 256> buffer{};
    while (pipe && std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) {
        out += buffer.data();
    }
    while (!out.empty() && out.back() == '\n') {
        out.pop_back();
    }
    return out;
}

class SdBusTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (env("SHIMKEEPER_TEST_USER_BUS") != "1" || env("NODE_UNIT").empty()) {
            GTEST_SKIP() << "needs the node harness: run tests/node/systemd_sdbus.sh";
        }
        auto manager = connect_systemd(spec::BusKind::user);
        ASSERT_TRUE(manager) << manager.error().message();
        m_manager = std::move(*manager);
    }

    std::unique_ptr<SystemdManager> m_manager;
};

TEST_F(SdBusTest, RestartFinishesDoneWithANewInvocation) {
    const auto unit = env("NODE_UNIT");
    const auto before = m_manager->unit_state(unit);
    ASSERT_TRUE(before) << before.error().message();
    EXPECT_EQ(before->active_state, "active");
    EXPECT_EQ(before->invocation_id.size(), 32u);

    const auto result = m_manager->restart_unit(unit, 30s);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(*result, JobResult::done);

    const auto after = m_manager->unit_state(unit);
    ASSERT_TRUE(after) << after.error().message();
    EXPECT_EQ(after->active_state, "active");
    EXPECT_EQ(after->sub_state, "running");
    EXPECT_NE(after->invocation_id, before->invocation_id);
    EXPECT_GT(after->active_enter_timestamp_us, before->active_enter_timestamp_us);
    EXPECT_EQ(after->invocation_id, systemctl_show(unit, "InvocationID"));
}

TEST_F(SdBusTest, PropertiesMatchWhatSystemctlShows) {
    const auto unit = env("NODE_UNIT");
    const auto state = m_manager->unit_state(unit);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_EQ(std::to_string(state->n_restarts), systemctl_show(unit, "NRestarts"));
    EXPECT_EQ(state->result, systemctl_show(unit, "Result"));
    EXPECT_EQ(std::to_string(state->start_limit_burst), systemctl_show(unit, "StartLimitBurst"));
    // The harness's unit mirrors upstream containerd.service: 16 starts within 60 s.
    EXPECT_EQ(state->start_limit_burst, 16u);
    EXPECT_EQ(state->start_limit_interval_us, 60'000'000u); // systemctl shows "1min"
    EXPECT_EQ(state->exec_main_status, 0);
}

TEST_F(SdBusTest, AnUnknownUnitIsAClearError) {
    const auto result = m_manager->restart_unit("shimkeeper-no-such.service", 5s);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::not_found);
    EXPECT_NE(result.error().message().find("org.freedesktop.systemd1.NoSuchUnit"),
              std::string::npos)
        << result.error().message();
    EXPECT_NE(result.error().message().find("shimkeeper-no-such.service"), std::string::npos);

    const auto state = m_manager->unit_state("shimkeeper-no-such.service");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().code(), util::ErrorCode::not_found);
    EXPECT_NE(state.error().message().find("LoadState=not-found"), std::string::npos)
        << state.error().message();
}

TEST_F(SdBusTest, AUnitWhoseStartFailsReportsFailed) {
    const auto unit = env("SHIMKEEPER_TEST_FAILING_UNIT");
    ASSERT_FALSE(unit.empty());
    const auto result = m_manager->restart_unit(unit, 30s);
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(*result, JobResult::failed);

    const auto state = m_manager->unit_state(unit);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_EQ(state->active_state, "failed");
    EXPECT_EQ(state->result, "exit-code");
    EXPECT_EQ(state->exec_main_status, 3);

    ASSERT_TRUE(m_manager->reset_failed(unit));
    EXPECT_EQ(systemctl_show(unit, "ActiveState"), "inactive");
}

TEST_F(SdBusTest, WaitingForAJobEndsAtTheTimeout) {
    const auto unit = env("SHIMKEEPER_TEST_SLOW_UNIT"); // Type=notify that never gets ready
    ASSERT_FALSE(unit.empty());
    const auto result = m_manager->restart_unit(unit, 300ms);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message().find("did not finish in time"), std::string::npos)
        << result.error().message();
    EXPECT_EQ(systemctl_show(unit, "ActiveState"), "activating");
}

TEST_F(SdBusTest, RestartGuardClearsARealStartLimitHitOnce) {
    const auto unit = env("SHIMKEEPER_TEST_LIMITED_UNIT"); // StartLimitBurst=2
    ASSERT_FALSE(unit.empty());
    // Restarting without the guard: the third start within the interval is refused.
    EXPECT_EQ(m_manager->restart_unit(unit, 10s).value_or(JobResult::canceled), JobResult::done);
    EXPECT_EQ(m_manager->restart_unit(unit, 10s).value_or(JobResult::canceled), JobResult::done);
    const auto refused = m_manager->restart_unit(unit, 10s);
    ASSERT_TRUE(refused) << refused.error().message();
    EXPECT_EQ(*refused, JobResult::failed);
    EXPECT_EQ(systemctl_show(unit, "Result"), "start-limit-hit");

    const auto dir = util::make_temp_dir(std::filesystem::temp_directory_path(), "sk-sdbus-");
    ASSERT_TRUE(dir) << dir.error().message();
    RealClock clock;
    RestartGuard guard(*m_manager, clock, *dir / "restarts", {.min_spacing = 0ms});
    const auto report = guard.restart(unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->result, JobResult::done) << report->describe(unit);
    EXPECT_TRUE(report->cleared_start_limit);
    EXPECT_EQ(report->attempts, 1);
    EXPECT_EQ(systemctl_show(unit, "Result"), "success");
    std::filesystem::remove_all(*dir);
}

} // namespace systemd_sdbus
} // namespace
} // namespace shimkeeper::systemd
