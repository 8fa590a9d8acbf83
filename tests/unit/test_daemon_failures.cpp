// run_daemon() when the desired state fails: backoff instead of a restart storm, recovery first,
// exceptions contained, and SIGTERM during a transaction.
#include "test_daemon_harness.hpp"

namespace {
namespace daemon_failures {

using namespace daemon_test;

struct Attempt {
    long long start_ms;
    long long end_ms;
    bool ok;
};

std::vector<Attempt> attempts(const fs::path& log) {
    std::vector<Attempt> out;
    for (const auto& line : read_lines(log)) {
        if (line.starts_with("reconcile ")) {
            std::istringstream in(line.substr(10));
            Attempt attempt{};
            std::string result;
            in >> attempt.start_ms >> attempt.end_ms >> result;
            attempt.ok = result == "ok";
            out.push_back(attempt);
        }
    }
    return out;
}

TEST_F(DaemonFixture, AFailingStateRetriesNoFasterThanTheBackoffEvenWhenFilesKeepChanging) {
    fs::create_directories(shims_d());
    write_file(shims_d() / "broken.toml", "");
    start(logging_recover(), logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1")); // a failing first reconcile still starts the service
    EXPECT_EQ(last_status(), "failing: shims.d/broken.toml: handler missing; retry in 1s");
    EXPECT_EQ(status_json()["daemon"]["state"], "failing");

    // Someone rewrites the broken file every 150 ms, longer than the 100 ms debounce: without the
    // guard each write would be a reconcile (and on a node, a containerd restart).
    long long churn_until = now_ms() + 3'000;
    while (now_ms() < churn_until) {
        replace_file(shims_d() / "broken.toml", std::to_string(now_ms()));
        std::this_thread::sleep_for(150ms); // pacing the writer, not waiting for a condition
    }
    // status.json is written just after an attempt logs its line: read it first, so that the log
    // holds the same attempts or, if one just ended, that one more.
    const int failures = status_json()["daemon"]["consecutive_failures"].get<int>();
    auto seen = attempts(calls_log());
    ASSERT_GE(seen.size(), 3u);
    std::vector<long long> backoff{200, 400, 800, 800, 800};
    for (size_t i = 1; i < seen.size(); ++i) {
        long long gap = seen[i].start_ms - seen[i - 1].end_ms;
        EXPECT_GE(gap, backoff[std::min(i - 1, backoff.size() - 1)]) << "attempt " << i;
    }
    // Without the guard every write would have been an attempt: about 20 of them.
    EXPECT_LE(seen.size(), 6u);
    EXPECT_TRUE(static_cast<int>(seen.size()) - failures == 0 ||
                static_cast<int>(seen.size()) - failures == 1)
        << seen.size() << " attempts logged, status.json counted " << failures << " just before";
    // An attempt may be under way (its status "reconciling (change)"); it fails as the others did.
    EXPECT_TRUE(eventually([&] {
        return last_status().starts_with("failing: shims.d/broken.toml: handler missing");
    })) << last_status();

    fs::remove(shims_d() / "broken.toml");
    ASSERT_TRUE(eventually([&] { return status_json()["daemon"]["state"] == "converged"; }));
    EXPECT_EQ(status_json()["daemon"]["consecutive_failures"], 0);
    EXPECT_TRUE(wait_notify("STATUS=converged: 0 shims"));
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, AFailedRecoveryIsRetriedAndNoReconcileRunsOverIt) {
    fs::path log = calls_log();
    fs::path healed = m_dir / "healed";
    ReconcileFn recover = [log, healed] {
        bool ok = fs::exists(healed);
        std::ofstream(log, std::ios::app) << "recover " << (ok ? "ok" : "fail") << "\n";
        return ReconcileOutcome{ok, false, ok ? "" : "journal entry 7: config restore failed", {}};
    };
    start(recover, logging_reconcile());
    ASSERT_TRUE(wait_notify("READY=1"));
    EXPECT_EQ(count_calls("reconcile"), 0);
    EXPECT_TRUE(last_status().starts_with(
        "failing: recovering an unfinished transaction: journal entry 7: config restore failed"));
    ASSERT_TRUE(eventually([&] { return count_calls("recover fail") >= 2; }));
    EXPECT_EQ(count_calls("reconcile"), 0);

    write_file(healed, "");
    ASSERT_TRUE(eventually([&] { return count_calls("reconcile") == 1; }));
    EXPECT_EQ(count_calls("recover ok"), 1);
    ASSERT_TRUE(eventually([&] { return status_json()["daemon"]["state"] == "converged"; }));
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, AThrowingTransactionIsAFailureNotACrash) {
    ReconcileFn reconcile = []() -> ReconcileOutcome {
        throw std::runtime_error("bad_alloc-ish");
    };
    start(logging_recover(), reconcile);
    ASSERT_TRUE(wait_notify("READY=1"));
    EXPECT_EQ(last_status(), "failing: internal error in reconcile: bad_alloc-ish; retry in 1s");
    ASSERT_TRUE(eventually([&] { return status_json()["daemon"]["consecutive_failures"] >= 2; }));
    EXPECT_TRUE(alive());
    EXPECT_EQ(stop(), 0);
}

TEST_F(DaemonFixture, SigtermDuringAReconcileLetsItFinishThenExitsZero) {
    fs::create_directories(shims_d());
    fs::path inside = m_dir / "inside";
    fs::path release = m_dir / "release";
    fs::path log = calls_log();
    fs::path dir = shims_d();
    ReconcileFn reconcile = [=] {
        if (!toml_names(dir).empty()) {
            write_file(inside, "");
            // The fake transaction holds until the test lets it go (bounded, never forever).
            eventually([&] { return fs::exists(release); });
            std::ofstream(log, std::ios::app) << "finished\n";
        }
        return ReconcileOutcome{true, true, "converged", {}};
    };
    start(logging_recover(), reconcile);
    ASSERT_TRUE(wait_notify("READY=1"));
    replace_file(shims_d() / "spin.toml", "");
    ASSERT_TRUE(eventually([&] { return fs::exists(inside); }));

    ::kill(m_pid, SIGTERM);
    // Still running: the signal waits for the transaction. Checked over a short window.
    EXPECT_FALSE(eventually([&] { return !alive(); }, 300ms));
    EXPECT_EQ(count_calls("finished"), 0);

    write_file(release, "");
    int status = 0;
    ASSERT_TRUE(eventually([&] { return ::waitpid(m_pid, &status, WNOHANG) == m_pid; }));
    m_pid = -1;
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(count_calls("finished"), 1);
    EXPECT_TRUE(wait_notify("STOPPING=1"));
}

} // namespace daemon_failures
} // namespace
