// The node transaction's logic with fakes at the process edges (systemd, containerd's API) and
// real files everywhere else: a config under a temp root, a real store, file:// artifacts.
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/write.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"
#include "support/fake_systemd.hpp"
#include "support/recording_log_sink.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <toml++/toml.h>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_transaction {

namespace fs = std::filesystem;

constexpr const char* k_config = "version = 2\n"
                                 "# the operator's comment stays\n"
                                 "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                                 "  default_runtime_name = \"runc\"\n";

// containerd as the transaction sees it through its API: it reports the runtimes that the config
// on disk holds, unless told to hide one (a handler that did not register).
class FakeContainerd final : public health::ContainerdClient {
public:
    explicit FakeContainerd(fs::path config) : m_config(std::move(config)) {}

    util::Expected<std::vector<health::PodSandboxInfo>>
    pod_sandboxes(std::chrono::milliseconds) override {
        return std::vector<health::PodSandboxInfo>{};
    }
    util::Expected<std::string> version(std::chrono::milliseconds) override { return "1.6.20"; }
    util::Expected<health::CriStatus> cri_status(std::chrono::milliseconds) override {
        health::CriStatus status;
        status.runtime_ready = true;
        status.conditions["RuntimeReady"] = true;
        status.handlers.push_back({"runc", "io.containerd.runc.v2", ""});
        auto table = toml::parse_file(m_config.string());
        auto* runtimes =
            table["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"].as_table();
        if (runtimes != nullptr) {
            for (const auto& [name, entry] : *runtimes) {
                if (std::string(name.str()) != hidden) {
                    status.handlers.push_back(
                        {std::string(name.str()),
                         entry.as_table()->get("runtime_type")->value_or(std::string()), ""});
                }
            }
        }
        return status;
    }

    std::string hidden;

private:
    fs::path m_config;
};

class TransactionTest : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(m_dir / "root/etc/containerd");
        ASSERT_TRUE(util::write_file_atomic(config_file(), k_config));
        m_settings.store.dir = "/var/lib/shimkeeper";
        m_settings.health.timeout = std::chrono::milliseconds(300);
        m_settings.containerd.config_path = "/etc/containerd/config.toml";
        m_settings.containerd.unit = "containerd.service";
        m_detection = containerd::detect(m_root, m_settings.containerd).value();
        m_systemd.add_unit("containerd.service");
    }
    void TearDown() override {
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        }
    }

    fs::path config_file() const { return m_dir / "root/etc/containerd/config.toml"; }

    // What a process killed right after writing the config leaves behind: an in-progress journal
    // entry "interrupted" with its backup, and a config holding a half-done change.
    void interrupt_after_config_write() {
        Journal journal(m_store.state_dir());
        JournalEntry entry;
        entry.id = "interrupted";
        entry.kind = "apply";
        entry.to_generation = 1;
        const fs::path backups = journal.backup_dir(entry.id);
        containerd::FileChange change{"/etc/containerd/config.toml", std::string(k_config), "",
                                      false};
        ASSERT_TRUE(containerd::keep_previous(change, backups));
        entry.files.push_back({"/etc/containerd/config.toml", true, backups.string(), ""});
        entry.steps = {"fetch", "preflight", "store", "links", "config"};
        ASSERT_TRUE(journal.save(entry));
        ASSERT_TRUE(util::write_file_atomic(config_file(), std::string(k_config) + "# half\n"));
    }
    fs::path link() const { return m_dir / "root/var/lib/shimkeeper/bin/containerd-shim-demo-v2"; }
    std::string config() const { return util::read_file(config_file()).value(); }

    // An artifact: a bare executable script, different content per variant.
    spec::ShimSpec shim(const std::string& variant) {
        fs::path artifact = m_dir / ("demo-" + variant);
        EXPECT_TRUE(util::write_file_atomic(artifact, "#!/bin/sh\necho " + variant + "\n", 0755));
        spec::ShimSpec s;
        s.name = "demo";
        s.handler = "demo";
        s.runtime_type = "io.containerd.demo.v2";
        s.binary = "containerd-shim-demo-v2";
        s.fetch.url = "file://" + artifact.string();
        s.fetch.sha256 = util::sha256_file_hex(artifact).value();
        return s;
    }

    util::Expected<Outcome> apply(const std::vector<spec::ShimSpec>& target,
                                  Restart restart = Restart::yes) {
        return execute(node(), target, "apply", restart);
    }
    Node node() {
        return Node{m_root,       m_settings,    m_store,  m_detection,
                    m_downloader, &m_containerd, &m_guard, m_log};
    }

    fs::path m_dir = util::make_temp_dir(fs::temp_directory_path(), "sk-txn-").value();
    util::HostRoot m_root{m_dir / "root"};
    spec::AgentSettings m_settings;
    containerd::Detection m_detection;
    std::shared_ptr<testing::RecordingLogSink> m_log_sink =
        std::make_shared<testing::RecordingLogSink>();
    util::Log m_log{util::LogLevel::info, m_log_sink};
    testing::FakeSystemdManager m_systemd;
    testing::FakeClock m_clock;
    fetch::CurlDownloader m_downloader{fetch::ProgressStyle::none};
    store::Store m_store{m_root, "/var/lib/shimkeeper"};
    systemd::RestartGuard m_guard{m_systemd, m_clock, m_dir / "restarts.json"};
    FakeContainerd m_containerd{config_file()};
};

TEST_F(TransactionTest, InstallCommitsGenerationLinkAndConfigWithOneRestart) {
    auto outcome = apply({shim("v1")});
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_EQ(outcome->result, TxnResult::committed);
    EXPECT_EQ(outcome->generation, 1);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 1);
    EXPECT_TRUE(fs::is_symlink(link()));
    EXPECT_NE(config().find("runtimes.demo]"), std::string::npos);
    EXPECT_EQ(config().rfind(k_config, 0), 0u) << "the operator's text must stay as it was";
    auto journal = Journal(m_store.state_dir()).load().value();
    ASSERT_TRUE(journal);
    EXPECT_EQ(journal->result, TxnResult::committed);
}

TEST_F(TransactionTest, EachChangedShimIsLoggedWithItsJournalFields) {
    const spec::ShimSpec v1 = shim("v1");
    auto outcome = apply({v1});
    ASSERT_TRUE(outcome) << outcome.error().message();
    const auto journal = Journal(m_store.state_dir()).load().value();
    ASSERT_TRUE(journal);
    const auto records = m_log_sink->about_shim("demo");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].level, util::LogLevel::info);
    EXPECT_EQ(records[0].fields.handler, "demo");
    EXPECT_EQ(records[0].fields.digest, "sha256:" + *v1.fetch.sha256);
    EXPECT_EQ(records[0].fields.txn, journal->id) << "TXN= names the journal entry";
    EXPECT_NE(records[0].message.find("install"), std::string::npos);
}

TEST_F(TransactionTest, ARolledBackShimIsLoggedAsAWarningWithItsFields) {
    m_systemd.script_restart({systemd::JobResult::failed, std::nullopt});
    ASSERT_TRUE(apply({shim("v1")}));
    const auto journal = Journal(m_store.state_dir()).load().value();
    ASSERT_TRUE(journal);
    const auto records = m_log_sink->about_shim("demo");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].level, util::LogLevel::warning);
    EXPECT_EQ(records[0].fields.txn, journal->id);
    EXPECT_NE(records[0].message.find("rolled-back"), std::string::npos) << records[0].message;
    bool rollback_line = false;
    for (const auto& record : m_log_sink->records) {
        rollback_line |= record.level == util::LogLevel::error && record.fields.txn == journal->id;
    }
    EXPECT_TRUE(rollback_line) << "the reason for the rollback carries TXN=";
}

TEST_F(TransactionTest, ASystemdThatDoesNotAnswerIsRefusedBeforeAnythingChanges) {
    const std::string config_before = config();
    m_systemd.unreachable = util::Error(util::ErrorCode::external,
                                        "systemd GetUnit() failed: Transport endpoint is not "
                                        "connected");
    auto outcome = apply({shim("v1")});
    ASSERT_FALSE(outcome) << "a change that cannot be restarted must not be made";
    EXPECT_NE(outcome.error().message().find("does not answer (nothing was changed"),
              std::string::npos)
        << outcome.error().message();
    EXPECT_NE(outcome.error().message().find("Transport endpoint"), std::string::npos);
    EXPECT_EQ(config(), config_before);
    EXPECT_FALSE(fs::exists(fs::symlink_status(link())));
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 0);
    const auto journal = Journal(m_store.state_dir()).load().value();
    ASSERT_TRUE(journal);
    EXPECT_EQ(journal->result, TxnResult::failed) << "refused, not rolled back";

    m_systemd.unreachable.reset(); // the bus answers again: the same apply converges
    auto again = apply({shim("v1")});
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(again->result, TxnResult::committed);
}

TEST_F(TransactionTest, SecondApplyChangesNothingAndRestartsNothing) {
    ASSERT_TRUE(apply({shim("v1")}));
    const auto journal_time = fs::last_write_time(m_store.state_dir() / "journal.json");
    const auto config_time = fs::last_write_time(config_file());
    auto outcome = apply({shim("v1")});
    ASSERT_TRUE(outcome);
    EXPECT_FALSE(outcome->changed);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 1);
    EXPECT_EQ(fs::last_write_time(m_store.state_dir() / "journal.json"), journal_time);
    EXPECT_EQ(fs::last_write_time(config_file()), config_time);
}

TEST_F(TransactionTest, FailedRestartRollsBackFilesLinksAndRestartsOnceMore) {
    m_systemd.script_restart({systemd::JobResult::failed, std::nullopt});
    auto outcome = apply({shim("v1")});
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_EQ(outcome->result, TxnResult::rolled_back);
    EXPECT_NE(outcome->reason.find("failed"), std::string::npos) << outcome->reason;
    EXPECT_EQ(outcome->exit_code(), 1);
    EXPECT_EQ(config(), k_config);
    EXPECT_FALSE(fs::exists(link()) || fs::is_symlink(link()));
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 2);
    EXPECT_FALSE(m_store.load_state().value().current);
}

// The handler stays hidden after the rollback restart too, so the rollback cannot prove health:
// the outcome says so (rollback-failed), yet files, link and generation are the old ones.
TEST_F(TransactionTest, HandlerStillMissingAfterRollbackIsRollbackFailedWithOldFilesRestored) {
    ASSERT_TRUE(apply({shim("v1")}));
    const std::string v1_config = config();
    const auto v1_link = fs::read_symlink(link());
    m_containerd.hidden = "demo";
    auto outcome = apply({shim("v2")});
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->result, TxnResult::rollback_failed)
        << "v1 is hidden too, so even the rollback cannot prove health: " << outcome->reason;
    m_containerd.hidden.clear();
    EXPECT_EQ(config(), v1_config);
    EXPECT_EQ(fs::read_symlink(link()), v1_link);
    EXPECT_EQ(m_store.load_state().value().current, 1);
}

TEST_F(TransactionTest, UpgradeWhoseHandlerDoesNotRegisterIsRolledBack) {
    ASSERT_TRUE(apply({shim("v1")}));
    const std::string v1_config = config();
    auto v2 = shim("v2");
    v2.handler = "demo-next"; // the new handler is the one containerd will not show
    m_containerd.hidden = "demo-next";
    auto outcome = apply({v2});
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->result, TxnResult::rolled_back) << outcome->reason;
    EXPECT_NE(outcome->reason.find("demo-next"), std::string::npos) << outcome->reason;
    EXPECT_EQ(config(), v1_config);
}

TEST_F(TransactionTest, WrongChecksumIsRefusedBeforeAnyChange) {
    auto bad = shim("v1");
    bad.fetch.sha256 = std::string(64, '0');
    auto outcome = apply({bad});
    ASSERT_FALSE(outcome);
    EXPECT_EQ(outcome.error().code(), util::ErrorCode::checksum);
    EXPECT_EQ(config(), k_config);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 0);
}

TEST_F(TransactionTest, NoRestartWritesFilesAndLeavesContainerdAlone) {
    auto outcome = apply({shim("v1")}, Restart::no);
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->result, TxnResult::committed);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 0);
    EXPECT_NE(config().find("runtimes.demo]"), std::string::npos);
}

TEST_F(TransactionTest, RemovingTheLastShimRemovesItsBlockAndLink) {
    ASSERT_TRUE(apply({shim("v1")}));
    auto outcome = apply({});
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->result, TxnResult::committed);
    EXPECT_EQ(config(), k_config);
    EXPECT_FALSE(fs::is_symlink(link()));
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 2);
}

TEST_F(TransactionTest, StoredBinaryChangedByHandIsFetchedAgain) {
    auto v1 = shim("v1");
    ASSERT_TRUE(apply({v1}));
    // The link holds the node path; this process finds the file under the root.
    const fs::path stored = m_store.artifact_dir(*v1.fetch.sha256) / v1.binary;
    const std::string original = util::read_file(stored).value();
    {
        std::ofstream tamper(stored, std::ios::app);
        tamper << "echo injected\n";
    }
    auto outcome = apply({v1});
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_EQ(outcome->result, TxnResult::committed);
    EXPECT_EQ(util::read_file(stored).value(), original);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 1) << "the config did not change";
}

TEST_F(TransactionTest, StoredBinaryChangedByHandStaysInPlaceWhenItCannotBeFetchedAgain) {
    auto v1 = shim("v1");
    ASSERT_TRUE(apply({v1}));
    const std::string config_before = config();
    const fs::path stored = m_store.artifact_dir(*v1.fetch.sha256) / v1.binary;
    {
        std::ofstream tamper(stored, std::ios::app);
        tamper << "echo injected\n";
    }
    const std::string changed = util::read_file(stored).value();
    fs::remove(m_dir / "demo-v1"); // the node is offline: its source is gone
    auto outcome = apply({v1});
    ASSERT_FALSE(outcome);
    EXPECT_NE(outcome.error().message().find("demo-v1"), std::string::npos)
        << outcome.error().message();
    // containerd's handler must still find a binary: the changed copy is kept, not deleted.
    EXPECT_EQ(util::read_file(stored).value(), changed);
    // The link holds the node path; under this test's root it must still lead to a file.
    EXPECT_TRUE(fs::exists(m_dir / "root" / fs::read_symlink(link()).relative_path()))
        << "the bin/ link dangles";
    EXPECT_EQ(config(), config_before);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 1);

    // Back online: the next apply puts the fresh copy in place; later ones need no download.
    ASSERT_TRUE(util::write_file_atomic(m_dir / "demo-v1", "#!/bin/sh\necho v1\n", 0755));
    ASSERT_TRUE(apply({v1}));
    EXPECT_EQ(util::read_file(stored).value(), "#!/bin/sh\necho v1\n");
    fs::remove(m_dir / "demo-v1");
    auto again = apply({v1});
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_FALSE(again->changed);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 1);
}

// One bare executable published once and installed as two shims under two binary names: the
// store keeps it under both names, so neither shim's link dangles and no apply downloads again.
TEST_F(TransactionTest, OneBareExecutableServesTwoShimsUnderTwoBinaryNames) {
    auto first = shim("v1");
    auto second = first;
    second.name = second.handler = "demo2";
    second.runtime_type = "io.containerd.demo2.v2";
    second.binary = "containerd-shim-demo2-v2";
    auto outcome = apply({first, second});
    ASSERT_TRUE(outcome) << outcome.error().message();
    // Installed one after the other (an operator adding the second shim later) too.
    ASSERT_TRUE(apply({first}));
    outcome = apply({first, second});
    ASSERT_TRUE(outcome) << outcome.error().message();
    const fs::path bin = m_dir / "root/var/lib/shimkeeper/bin";
    for (const auto& s : {first, second}) {
        const fs::path target = m_dir / "root" / fs::read_symlink(bin / s.binary).relative_path();
        auto content = util::read_file(target);
        ASSERT_TRUE(content) << s.binary << "'s link dangles";
        EXPECT_EQ(*content, "#!/bin/sh\necho v1\n") << s.binary;
    }
    for (const auto& record : m_log_sink->records) {
        EXPECT_EQ(record.message.find("changed by hand"), std::string::npos) << record.message;
    }
    fs::remove(m_dir / "demo-v1"); // offline: both are served from the store
    auto again = apply({first, second});
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_FALSE(again->changed);
}

TEST_F(TransactionTest, OnlyTheNewestConfigBackupsAreKept) {
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(apply({shim("v" + std::to_string(i))}));
        ASSERT_TRUE(apply({}));
    }
    std::size_t backups = 0;
    for (const auto& entry : fs::directory_iterator(m_store.state_dir() / "backups")) {
        (void)entry;
        ++backups;
    }
    EXPECT_EQ(backups, 5u);
}

TEST_F(TransactionTest, RecoveryRestoresTheBeforeStateOfAnInterruptedTransaction) {
    interrupt_after_config_write();
    Journal journal(m_store.state_dir());

    auto recovery = recover(node(), Restart::yes);
    ASSERT_TRUE(recovery) << recovery.error().message();
    EXPECT_TRUE(recovery->needed);
    EXPECT_EQ(config(), k_config);
    EXPECT_EQ(journal.load().value()->result, TxnResult::rolled_back);
    // The running containerd (the fake reports the config on disk) already matches: no restart.
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 0);
}

// An entry left in progress is never overwritten by the next transaction: that one recovers it
// first (in the daemon too, not only once at start).
TEST_F(TransactionTest, NextTransactionRecoversAnInterruptedEntryFirst) {
    interrupt_after_config_write();
    Journal journal(m_store.state_dir());

    auto outcome = apply({shim("v1")});
    ASSERT_TRUE(outcome) << outcome.error().message();
    ASSERT_TRUE(outcome->recovered);
    EXPECT_EQ(outcome->recovered->id, "interrupted");
    EXPECT_EQ(outcome->result, TxnResult::committed);
    EXPECT_EQ(config().find("# half"), std::string::npos);
    EXPECT_NE(journal.load().value()->id, "interrupted");
}

// A failure says which shims it is about (a rollout halts only for those): the shim
// that could not be staged, the shims whose change containerd would not serve; none for a
// failure of the node itself.
TEST_F(TransactionTest, AFailureNamesOnlyTheShimsItIsAbout) {
    ASSERT_TRUE(apply({shim("v1")}));
    spec::ShimSpec other = shim("o1");
    other.name = "other";
    other.handler = "other";
    other.runtime_type = "io.containerd.other.v2";
    other.binary = "containerd-shim-other-v2";

    std::vector<std::vector<std::string>> refusals;
    Node hearing = node();
    hearing.refused_about = [&](const std::vector<std::string>& shims) {
        refusals.push_back(shims);
    };
    spec::ShimSpec unfetchable = other;
    unfetchable.fetch.sha256 = std::string(64, '0');
    auto refused = execute(hearing, {shim("v1"), unfetchable}, "apply", Restart::yes);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refusals, (std::vector<std::vector<std::string>>{{"other"}}));

    m_containerd.hidden = "other"; // its handler never registers
    auto rolled_back = apply({shim("v1"), other});
    ASSERT_TRUE(rolled_back) << rolled_back.error().message();
    EXPECT_EQ(rolled_back->result, TxnResult::rolled_back) << rolled_back->reason;
    EXPECT_EQ(rolled_back->blamed, std::vector<std::string>{"other"})
        << "demo did not change: the failure is not about it";
    m_containerd.hidden.clear();

    hearing.before_change = [](const NodePlan&, const store::StoreState&) -> util::Expected<void> {
        return util::fail(util::ErrorCode::network, "the API server does not answer");
    };
    auto not_about_a_shim = execute(hearing, {shim("v1"), other}, "apply", Restart::yes);
    ASSERT_FALSE(not_about_a_shim);
    EXPECT_EQ(refusals.size(), 1U) << "a refusal about no shim names none";
}

// Cluster mode's report before the change takes the rollout slot: it comes before the write-ahead
// (the config's backup and the journal's before-state, fsyncs the next node would wait on), and
// the last step before the first change is the recheck, which can still refuse with the node
// untouched.
TEST_F(TransactionTest, TheChangeIsToldBeforeTheWriteAheadAndRecheckedLast) {
    ASSERT_TRUE(apply({shim("v1")}));
    const std::string config_v1 = config();
    const fs::path link_v1 = fs::read_symlink(link());
    auto journal_files = [this] {
        auto entry = Journal(m_store.state_dir()).load().value();
        return entry ? entry->files.size() : std::size_t{99};
    };
    std::vector<std::string> calls;
    Node hooked = node();
    hooked.before_change = [&](const NodePlan&, const store::StoreState&) -> util::Expected<void> {
        calls.push_back("told with " + std::to_string(journal_files()) + " files kept");
        return {};
    };
    hooked.recheck_before_change = [&]() -> util::Expected<void> {
        calls.push_back("rechecked with " + std::to_string(journal_files()) + " files kept");
        return util::fail(util::ErrorCode::conflict, "rollout slot demo-slot-0 is no longer fresh");
    };
    auto refused = execute(hooked, {shim("v2")}, "apply", Restart::yes);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("no longer fresh"), std::string::npos)
        << refused.error().message();
    EXPECT_EQ(calls,
              (std::vector<std::string>{"told with 0 files kept", "rechecked with 1 files kept"}));
    EXPECT_EQ(config(), config_v1) << "refused by the recheck: nothing changed";
    EXPECT_EQ(fs::read_symlink(link()), link_v1);
    EXPECT_EQ(m_systemd.restarts("containerd.service"), 1) << "only v1's";
    auto entry = Journal(m_store.state_dir()).load().value();
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->result, TxnResult::failed) << "a refusal: failed before its first change";
}

} // namespace reconcile_transaction
} // namespace
} // namespace shimkeeper::reconcile
