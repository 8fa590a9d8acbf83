// Staging ahead of a rollout slot (stage_ahead.hpp) with real files: a store under a temp root,
// file:// artifacts, the real downloader. It may change the content-addressed store and nothing
// else, and a failure is the transaction's to report, not its own.
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/reconcile/stage_ahead.hpp"
#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"
#include "staging_node.hpp"
#include "support/recording_log_sink.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_stage_ahead {

namespace fs = std::filesystem;

class StageAheadTest : public ::testing::Test, protected testing::StagingNode {
protected:
    StageAheadTest() : StagingNode("sk-ahead-") {}

    // A bare executable artifact named `name`, pinned by its sha256.
    spec::ShimSpec shim(const std::string& name) {
        const fs::path artifact = m_dir / (name + ".bin");
        return pinned_shim(name, artifact, "file://" + artifact.string());
    }
    Node node() {
        return Node{m_root,       m_settings, m_store, m_detection,
                    m_downloader, nullptr,    nullptr, m_log};
    }
    StagedAhead stage(const std::vector<spec::ShimSpec>& shims) {
        return stage_ahead(node(), shims);
    }
    bool stored(const spec::ShimSpec& s) const { return m_store.has_artifact(*s.fetch.sha256); }
    std::vector<std::string> warnings() const {
        std::vector<std::string> out;
        for (const auto& record : m_log_sink->records) {
            if (record.level == util::LogLevel::warning) {
                out.push_back(record.message);
            }
        }
        return out;
    }

    std::shared_ptr<testing::RecordingLogSink> m_log_sink =
        std::make_shared<testing::RecordingLogSink>();
    util::Log m_log{util::LogLevel::debug, m_log_sink};
    fetch::CurlDownloader m_downloader{fetch::ProgressStyle::none};
};

TEST_F(StageAheadTest, APinnedArtifactIsStoredAndNothingElseOfTheNodeChanges) {
    const spec::ShimSpec demo = shim("demo");
    const StagedAhead staged = stage({demo});
    EXPECT_EQ(staged.downloaded, std::vector<std::string>{"demo"});
    EXPECT_TRUE(stored(demo));
    EXPECT_EQ(util::read_file(m_dir / "root/etc/containerd/config.toml").value(), "version = 2\n");
    EXPECT_TRUE(!fs::exists(m_store.bin_dir()) || fs::is_empty(m_store.bin_dir()))
        << "no link before the slot";
    const auto state = m_store.load_state().value();
    EXPECT_EQ(state.current_generation(), nullptr) << "no generation before the slot";
}

TEST_F(StageAheadTest, AnArtifactStagedBeforeCostsNoSecondDownload) {
    const spec::ShimSpec demo = shim("demo");
    ASSERT_EQ(stage({demo}).downloaded.size(), 1u);
    fs::remove(m_dir / "demo.bin"); // a second download would fail now
    const StagedAhead again = stage({demo});
    EXPECT_EQ(again.held, std::vector<std::string>{"demo"});
    EXPECT_TRUE(again.failed.empty());
}

TEST_F(StageAheadTest, AnUnpinnedUrlIsLeftToItsTransaction) {
    spec::ShimSpec loose = shim("loose");
    loose.fetch.sha256.reset();
    const StagedAhead staged = stage({loose});
    EXPECT_EQ(staged.unpinned, std::vector<std::string>{"loose"});
    EXPECT_TRUE(staged.downloaded.empty());
    EXPECT_TRUE(m_store.artifact_digests().empty());
}

TEST_F(StageAheadTest, AFailureIsAWarningTheStoreStaysAsItWasAndTheOthersAreStaged) {
    spec::ShimSpec wrong = shim("wrong");
    wrong.fetch.sha256 = std::string(64, 'a');
    const spec::ShimSpec good = shim("good");
    const StagedAhead staged = stage({wrong, good});
    EXPECT_EQ(staged.failed, std::vector<std::string>{"wrong"});
    EXPECT_EQ(staged.downloaded, std::vector<std::string>{"good"});
    EXPECT_FALSE(stored(wrong));
    ASSERT_EQ(warnings().size(), 1u);
    EXPECT_NE(warnings()[0].find("could not stage ahead"), std::string::npos) << warnings()[0];
    EXPECT_NE(warnings()[0].find("its transaction fetches it again"), std::string::npos);
}

// Another Shim's slot comes first: its commit's garbage collection keeps what waits staged, so the
// waiting Shim's slot costs no second download.
TEST_F(StageAheadTest, AnotherShimsCommitKeepsWhatIsStagedAhead) {
    const spec::ShimSpec waiting = shim("waiting");
    ASSERT_EQ(stage({waiting}).downloaded.size(), 1u);
    Node other_slot = node();
    other_slot.keep_artifacts = staged_ahead_digests(other_slot, {waiting});
    EXPECT_EQ(other_slot.keep_artifacts, std::set<std::string>{*waiting.fetch.sha256});
    auto outcome = execute(other_slot, {shim("other")}, "apply", Restart::no);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().message();
    ASSERT_EQ(outcome->result, TxnResult::committed);
    EXPECT_TRUE(stored(waiting)) << "collected after the other Shim's commit";
    // An unpinned Shim is never staged, so nothing of it is kept either.
    spec::ShimSpec loose = shim("loose");
    loose.fetch.sha256.reset();
    EXPECT_TRUE(staged_ahead_digests(node(), {loose}).empty());
}

} // namespace reconcile_stage_ahead
} // namespace
} // namespace shimkeeper::reconcile
