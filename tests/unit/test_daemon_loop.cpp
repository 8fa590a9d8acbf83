// run_daemon() end to end in a child process: lifecycle, change detection, watchdog, signals.
#include "test_daemon_harness.hpp"

namespace {
namespace daemon_loop {

using namespace daemon_test;

TEST_F(DaemonFixture, RecoversAndReconcilesBeforeReadyThenStopsCleanlyOnSigterm) {
    fs::create_directories(shims_d());
    write_file(shims_d() / "spin.toml", "");
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));

    auto calls = read_lines(calls_log());
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_TRUE(calls[0].starts_with("recover "));
    EXPECT_TRUE(calls[1].starts_with("reconcile "));
    EXPECT_EQ(last_status(), "converged: 1 shims");
    nlohmann::json status = status_json();
    EXPECT_EQ(status["daemon"]["state"], "converged");
    EXPECT_EQ(status["daemon"]["last_trigger"], "startup");
    EXPECT_EQ(status["result"]["shims"], nlohmann::json({"spin"}));

    EXPECT_EQ(stop(SIGTERM), 0);
    EXPECT_TRUE(wait_notify("STOPPING=1"));
    EXPECT_EQ(status_json()["daemon"]["state"], "stopping");
    EXPECT_EQ(count_calls("recover"), 1);
}

TEST_F(DaemonFixture, SigintStopsItToo) {
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    EXPECT_EQ(stop(SIGINT), 0);
}

TEST_F(DaemonFixture, ANewDropInConvergesWithinSeconds) {
    fs::create_directories(shims_d());
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    replace_file(shims_d() / "wasmtime.toml", "");
    EXPECT_TRUE(eventually(
        [&] { return status_json()["result"]["shims"] == nlohmann::json({"wasmtime"}); }));
    EXPECT_EQ(status_json()["daemon"]["last_trigger"], "change");
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, ABurstOfWritesIsReadOnce) {
    fs::create_directories(shims_d());
    m_config.debounce = 3s; // far longer than the burst takes, even starved at nice 19
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    for (const char* name : {"a", "b", "c", "d", "e"}) {
        replace_file(shims_d() / (std::string(name) + ".toml"), "");
    }
    ASSERT_TRUE(eventually([&] { return status_json()["result"]["shims"].size() == 5; }));
    EXPECT_EQ(count_calls("reconcile"), 2); // startup + one for the whole burst
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, FilesTheLoaderIgnoresDoNotTriggerAReconcile) {
    fs::create_directories(shims_d());
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    write_file(shims_d() / ".spin.toml.swp", "");
    write_file(shims_d() / "README", "");
    write_file(etc() / "unrelated.conf", "");
    // Then a real change: if the ignored ones had counted, this would be a third reconcile.
    replace_file(shims_d() / "spin.toml", "");
    ASSERT_TRUE(eventually([&] { return status_json()["result"]["shims"].size() == 1; }));
    EXPECT_EQ(count_calls("reconcile"), 2);
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, TheAgentConfigReplacedByRenameIsSeen) {
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    replace_file(agent_config(), "# edited\n");
    EXPECT_TRUE(eventually([&] { return count_calls("reconcile") == 2; }));
    replace_file(agent_config(), "# edited again\n"); // the watch survived the first rename
    EXPECT_TRUE(eventually([&] { return count_calls("reconcile") == 3; }));
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, ADropInDirectoryCreatedLaterIsWatchedAndRewatchedWhenReplaced) {
    start(logging_recover(), logging_reconcile()); // no shims.d/ yet
    ASSERT_TRUE(wait_notify("READY=1"));
    fs::create_directories(shims_d());
    ASSERT_TRUE(eventually([&] { return count_calls("reconcile") == 2; }));
    replace_file(shims_d() / "spin.toml", "");
    ASSERT_TRUE(
        eventually([&] { return status_json()["result"]["shims"] == nlohmann::json({"spin"}); }));

    fs::remove_all(shims_d());
    ASSERT_TRUE(eventually([&] { return status_json()["result"]["shims"].empty(); }));
    int before = count_calls("reconcile");
    fs::create_directories(shims_d());
    ASSERT_TRUE(eventually([&] { return count_calls("reconcile") > before; }));
    replace_file(shims_d() / "crun.toml", "");
    EXPECT_TRUE(
        eventually([&] { return status_json()["result"]["shims"] == nlohmann::json({"crun"}); }));
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, PingsTheWatchdogFromTheLoopWhileIdle) {
    start(logging_recover(), logging_reconcile(),
          {{"WATCHDOG_USEC", "300000"}, {"WATCHDOG_PID", "$PID"}});
    ASSERT_TRUE(wait_notify("READY=1"));
    int before = count_messages("WATCHDOG=1");
    // sd-event pings at least every half interval: within 1.5 s a healthy loop sends several.
    wait_notify("no such field", 1500ms);
    EXPECT_GE(count_messages("WATCHDOG=1") - before, 3);
    EXPECT_EQ(count_calls("reconcile"), 1); // pings are not reconciles
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, NoWatchdogPingsWhenSystemdDidNotAskForThem) {
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    wait_notify("no such field", 500ms);
    EXPECT_EQ(count_messages("WATCHDOG=1"), 0);
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, TheDriftCheckReconcilesWithoutAnyChange) {
    m_config.drift_interval = 300ms;
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    EXPECT_TRUE(eventually([&] { return count_calls("reconcile") >= 3; }));
    EXPECT_EQ(status_json()["daemon"]["last_trigger"], "drift check");
    EXPECT_EQ(stop(), 0);
}

// A reconcile waiting on something no watch sees (a removal blocked by pods) asks to be looked at
// again: the daemon does, long before the drift check, and stops once it no longer asks.
TEST_F(DaemonFixture, ARecheckAfterBringsTheNextReconcileForwardWhileAsked) {
    const fs::path log = calls_log();
    const fs::path waiting = m_dir / "waiting";
    write_file(waiting, "");
    start(logging_recover(), [log, waiting] {
        std::ofstream(log, std::ios::app) << "reconcile " << now_ms() << "\n";
        ReconcileOutcome outcome{true, false, "converged", {}};
        if (fs::exists(waiting)) {
            outcome.recheck_after = 200ms;
        }
        return outcome;
    });
    ASSERT_TRUE(wait_notify("READY=1"));
    EXPECT_TRUE(eventually([&] { return count_calls("reconcile") >= 3; }));
    fs::remove(waiting);
    ASSERT_TRUE(eventually([&] { return count_calls("reconcile") >= 4; }));
    const int settled = count_calls("reconcile");
    wait_notify("no such field", 1s); // the drift check is 5 min away: no more reconciles
    EXPECT_LE(count_calls("reconcile"), settled + 1);
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, WritesTheStatusFileWhereItsDirectoryDidNotExist) {
    m_config.status_file = m_dir / "deep" / "run" / "shimkeeper" / "status.json";
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    EXPECT_EQ(status_json()["daemon"]["state"], "converged");
    EXPECT_EQ(status_json()["daemon"]["pid"], m_pid);
    EXPECT_EQ(stop(), 0);
}

// A change source beside inotify (what a Kubernetes watch will be): readable fd -> callback;
// "changed" schedules a reconcile, "not changed" does not. The source outlives every reconcile.
TEST_F(DaemonFixture, AChangeSourceBesideInotifyTriggersAReconcileOnlyWhenItSaysChanged) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const int read_end = pipe_fds[0];
    m_config.change_sources.push_back({read_end, "test source", [read_end] {
                                           char byte = 0;
                                           return ::read(read_end, &byte, 1) == 1 && byte == 'c';
                                       }});
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    ASSERT_EQ(::write(pipe_fds[1], "n", 1), 1); // readable, but "nothing changed"
    ASSERT_EQ(::write(pipe_fds[1], "c", 1), 1);
    EXPECT_TRUE(eventually([&] { return count_calls("reconcile") == 2; }));
    EXPECT_EQ(status_json()["daemon"]["last_trigger"], "change");
    ASSERT_EQ(::write(pipe_fds[1], "c", 1), 1); // the same source, again
    EXPECT_TRUE(eventually([&] { return count_calls("reconcile") == 3; }));
    EXPECT_EQ(stop(), 0);
    EXPECT_EQ(count_calls("reconcile"), 3);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
}

} // namespace daemon_loop
} // namespace
