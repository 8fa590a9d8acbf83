// RestartGuard against the fake systemd and a fake clock: how long it waits, what it records in
// the history file, and that start-limit-hit is cleared once and never in a loop.
#include "shimkeeper/systemd/restart_guard.hpp"
#include "shimkeeper/systemd/restart_history.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "support/fake_systemd.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace shimkeeper::systemd {
namespace {
namespace systemd_restart_guard {

using namespace std::chrono_literals;
using testing_fakes = shimkeeper::testing::FakeSystemdManager;
using shimkeeper::testing::FakeClock;

constexpr const char* k_unit = "containerd.service";

class RestartGuardTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = util::make_temp_dir(std::filesystem::temp_directory_path(), "sk-guard-").value();
        m_history = m_dir / "state" / "restarts";
        m_fake.add_unit(k_unit);
    }
    void TearDown() override {
        if (!HasFailure()) {
            std::filesystem::remove_all(m_dir);
        }
    }
    RestartGuard guard(std::chrono::milliseconds spacing = 2s) {
        return RestartGuard(m_fake, m_clock, m_history,
                            {.min_spacing = spacing, .job_timeout = 30s});
    }

    std::filesystem::path m_dir;
    std::filesystem::path m_history;
    testing_fakes m_fake;
    FakeClock m_clock;
};

TEST_F(RestartGuardTest, FirstRestartDoesNotWaitAndIsRecorded) {
    const auto before = m_fake.unit(k_unit).invocation_id;
    auto g = guard();
    const auto report = g.restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->result, JobResult::done);
    EXPECT_EQ(report->waited, 0ms);
    EXPECT_EQ(report->attempts, 1);
    EXPECT_NE(report->state.invocation_id, before);
    EXPECT_EQ(m_fake.restarts(k_unit), 1);
    EXPECT_EQ(m_fake.last_timeout, 30s);

    const auto history = RestartHistory::load(m_history);
    ASSERT_TRUE(history) << history.error().message();
    ASSERT_EQ(history->of(k_unit).size(), 1u);
    EXPECT_EQ(history->of(k_unit).front(), m_clock.now());
}

TEST_F(RestartGuardTest, KeepsTheMinimumSpacingAcrossProcesses) {
    ASSERT_TRUE(guard().restart(k_unit));
    m_clock.advance(500ms);
    // A new guard (as in the next `shimkeeper` run) reads the same history file.
    const auto report = guard().restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->waited, 1500ms);
    EXPECT_EQ(m_fake.restarts(k_unit), 2);
    EXPECT_NE(report->describe(k_unit).find("waited 1.5 s"), std::string::npos)
        << report->describe(k_unit);
}

TEST_F(RestartGuardTest, LeavesOneStartOfTheBurstToSystemd) {
    // Default limit: 5 starts in 10 s. With no spacing, 4 restarts go through at once...
    auto g = guard(0ms);
    for (int i = 0; i < 4; ++i) {
        const auto report = g.restart(k_unit);
        ASSERT_TRUE(report) << report.error().message();
        EXPECT_EQ(report->waited, 0ms) << "restart " << i;
    }
    // ...and the fifth waits until the first has left the 10 s interval.
    m_clock.advance(3s);
    const auto report = g.restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_GE(report->waited, 7s);
    EXPECT_LT(report->waited, 7s + 10ms);
    EXPECT_EQ(m_fake.restarts(k_unit), 5);
}

TEST_F(RestartGuardTest, AUnitWithoutStartLimitOnlyKeepsSpacing) {
    m_fake.unit(k_unit).start_limit_burst = 0;
    auto g = guard(1s);
    for (int i = 0; i < 8; ++i) {
        ASSERT_TRUE(g.restart(k_unit));
    }
    EXPECT_EQ(m_clock.sleeps.size(), 7u);
    EXPECT_EQ(m_fake.restarts(k_unit), 8);
}

TEST_F(RestartGuardTest, StartLimitHitAfterTheRestartIsClearedOnceAndRetriedOnce) {
    UnitState hit = m_fake.unit(k_unit);
    hit.active_state = "failed";
    hit.sub_state = "failed";
    hit.result = "start-limit-hit";
    m_fake.script_restart({JobResult::failed, hit});
    const auto report = guard().restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->result, JobResult::done);
    EXPECT_TRUE(report->cleared_start_limit);
    EXPECT_EQ(report->attempts, 2);
    EXPECT_EQ(m_fake.count(testing_fakes::CallKind::reset_failed, k_unit), 1);
    EXPECT_EQ(m_fake.restarts(k_unit), 2);
    EXPECT_EQ(report->state.active_state, "active");
    EXPECT_EQ(report->waited, 2s); // the retry still keeps the spacing
}

TEST_F(RestartGuardTest, AfterAResetOnlyTheSpacingCountsNotOlderRestarts) {
    // Four restarts in the last seconds fill the budget of 5 starts in 10 s...
    {
        auto fill = guard(0ms);
        for (int i = 0; i < 4; ++i) {
            ASSERT_TRUE(fill.restart(k_unit));
            m_clock.advance(1s);
        }
    }
    // ...but the unit is in start-limit-hit now: reset-failed clears systemd's counter too.
    m_fake.unit(k_unit).active_state = "failed";
    m_fake.unit(k_unit).result = "start-limit-hit";
    const auto report = guard(2s).restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_TRUE(report->cleared_start_limit);
    EXPECT_EQ(report->result, JobResult::done);
    EXPECT_EQ(report->waited, 1s); // spacing from the latest restart, not the burst window
    const auto history = RestartHistory::load(m_history);
    ASSERT_TRUE(history);
    EXPECT_EQ(history->of(k_unit).size(), 2u);
}

TEST_F(RestartGuardTest, NeverLoopsWhenTheLimitIsHitAgain) {
    UnitState hit = m_fake.unit(k_unit);
    hit.active_state = "failed";
    hit.result = "start-limit-hit";
    m_fake.unit(k_unit) = hit; // already failed before we start
    m_fake.script_restart({JobResult::failed, hit});
    m_fake.script_restart({JobResult::failed, hit});
    const auto report = guard().restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->result, JobResult::failed);
    EXPECT_EQ(m_fake.count(testing_fakes::CallKind::reset_failed, k_unit), 1);
    EXPECT_EQ(m_fake.restarts(k_unit), 1);
    const auto text = report->describe(k_unit);
    EXPECT_NE(text.find("start-limit-hit"), std::string::npos) << text;
    EXPECT_NE(text.find("systemctl status containerd.service"), std::string::npos) << text;
}

TEST_F(RestartGuardTest, AnOrdinaryFailureIsReportedWithoutReset) {
    m_fake.script_restart({JobResult::failed, std::nullopt});
    const auto report = guard().restart(k_unit);
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->result, JobResult::failed);
    EXPECT_EQ(report->state.result, "exit-code");
    EXPECT_EQ(m_fake.count(testing_fakes::CallKind::reset_failed, k_unit), 0);
    EXPECT_EQ(m_fake.restarts(k_unit), 1);
}

TEST_F(RestartGuardTest, BusErrorsPassUp) {
    const auto report = guard().restart("nope.service");
    ASSERT_FALSE(report);
    EXPECT_EQ(report.error().code(), util::ErrorCode::not_found);
    EXPECT_NE(report.error().message().find("nope.service"), std::string::npos);
}

TEST_F(RestartGuardTest, AMalformedHistoryNamesTheFileAndLine) {
    ASSERT_TRUE(util::create_directories(m_history.parent_path()));
    ASSERT_TRUE(util::write_file_atomic(m_history, "containerd.service 12\ngarbage\n"));
    const auto report = guard().restart(k_unit);
    ASSERT_FALSE(report);
    EXPECT_NE(report.error().message().find(m_history.string() + ":2"), std::string::npos)
        << report.error().message();
    EXPECT_EQ(m_fake.restarts(k_unit), 0);
}

TEST_F(RestartGuardTest, OldRecordsArePruned) {
    auto g = guard(0ms);
    ASSERT_TRUE(g.restart(k_unit));
    m_clock.advance(1h);
    ASSERT_TRUE(g.restart(k_unit));
    const auto history = RestartHistory::load(m_history);
    ASSERT_TRUE(history);
    EXPECT_EQ(history->of(k_unit).size(), 1u);
}

} // namespace systemd_restart_guard
} // namespace
} // namespace shimkeeper::systemd
