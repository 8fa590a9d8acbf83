// Staging ahead on threads of their own (background_staging.hpp), with real files, the real
// downloader and the local artifact server, whose /hold/ keeps a download open until released:
// the caller is never blocked by a download, asks no slot for a Shim until its staging ended,
// and a version no longer wanted stops its download and leaves nothing behind.
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/reconcile/background_staging.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"
#include "staging_node.hpp"
#include "test_fetch_server.hpp"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <poll.h>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_background_staging {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

// The stagings' threads log while the test reads: a sink that keeps the messages under a lock.
class LockedLogSink final : public util::LogSink {
public:
    void write(const util::LogRecord& record) override {
        const std::lock_guard lock(m_mutex);
        m_messages.push_back(record.message);
    }
    bool has(const std::string& text) const {
        const std::lock_guard lock(m_mutex);
        return std::ranges::any_of(m_messages, [&](const std::string& message) {
            return message.find(text) != std::string::npos;
        });
    }

private:
    mutable std::mutex m_mutex;
    std::vector<std::string> m_messages;
};

class BackgroundStagingTest : public ::testing::Test, protected testing::StagingNode {
protected:
    BackgroundStagingTest() : StagingNode("sk-bg-stage-") {}

    // An executable artifact served as /<name>.bin (held: /hold/1/<name>.bin), pinned by sha256.
    spec::ShimSpec shim(const std::string& name, bool held = false) {
        return pinned_shim(name, m_dir / "www" / (name + ".bin"),
                           m_server.url((held ? "/hold/1/" : "/") + name + ".bin"));
    }
    Node node() {
        return Node{m_root,       m_settings, m_store, m_detection,
                    m_downloader, nullptr,    nullptr, m_log};
    }
    bool stored(const spec::ShimSpec& s) const { return m_store.has_artifact(*s.fetch.sha256); }
    int requests_for(const std::string& name, bool held = true) const {
        return m_server.requests_for((held ? "/hold/1/" : "/") + name + ".bin");
    }
    // Until a staging has ended (the fd the daemon polls), at most 20 s.
    bool wait_for_an_end() {
        pollfd ready{m_staging.fd(), POLLIN, 0};
        const bool ended = ::poll(&ready, 1, 20'000) == 1;
        return ended && m_staging.take_ended();
    }
    // Until the server has seen the held download's request, at most 20 s.
    void wait_for_request(const std::string& name) {
        const auto deadline = steady_clock::now() + std::chrono::seconds(20);
        while (requests_for(name) == 0) {
            ASSERT_LT(steady_clock::now(), deadline) << name << "'s download never started";
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    bool logged(const std::string& text) const { return m_log_sink->has(text); }

    bool m_www_made = fs::create_directories(m_dir / "www");
    fetch::testing::ArtifactServer m_server{m_dir / "www", m_dir};
    std::shared_ptr<LockedLogSink> m_log_sink = std::make_shared<LockedLogSink>();
    util::Log m_log{util::LogLevel::debug, m_log_sink};
    fetch::CurlDownloader m_downloader{fetch::ProgressStyle::none};
    BackgroundStaging m_staging{m_log, [] {
                                    return std::make_unique<fetch::CurlDownloader>(
                                        fetch::ProgressStyle::none);
                                }};
};

TEST_F(BackgroundStagingTest, AHeldDownloadBlocksNeitherTheCallerNorAnotherShimsStaging) {
    const spec::ShimSpec held = shim("held", true);
    const spec::ShimSpec quick = shim("quick");
    EXPECT_EQ(m_staging.stage(node(), {held}), std::set<std::string>{"held"});
    ASSERT_NO_FATAL_FAILURE(wait_for_request("held"));
    EXPECT_EQ(m_staging.stage(node(), {held, quick}), (std::set<std::string>{"held", "quick"}));
    ASSERT_TRUE(wait_for_an_end()) << "quick's staging did not end while held's was held";
    EXPECT_EQ(m_staging.stage(node(), {held, quick}), std::set<std::string>{"held"})
        << "quick may ask for its slot, held not yet";
    EXPECT_TRUE(stored(quick));
    EXPECT_FALSE(stored(held));

    m_server.release_held();
    ASSERT_TRUE(wait_for_an_end());
    EXPECT_TRUE(m_staging.stage(node(), {held, quick}).empty());
    EXPECT_TRUE(stored(held));
    EXPECT_TRUE(m_staging.stage(node(), {held, quick}).empty());
    EXPECT_EQ(requests_for("held"), 1) << "a staging that ended is not started again";
    EXPECT_EQ(requests_for("quick", false), 1);
}

TEST_F(BackgroundStagingTest, AVersionNoLongerWantedStopsItsDownloadAndLeavesNothing) {
    const spec::ShimSpec held = shim("held", true);
    EXPECT_EQ(m_staging.stage(node(), {held}), std::set<std::string>{"held"});
    ASSERT_NO_FATAL_FAILURE(wait_for_request("held"));
    EXPECT_TRUE(m_staging.stage(node(), {}).empty());
    EXPECT_TRUE(logged("held: staging ahead of its rollout slot stops"));
    ASSERT_TRUE(wait_for_an_end()) << "the held download did not stop";
    EXPECT_TRUE(logged("held: staging ahead of its rollout slot stopped; nothing was stored"));
    EXPECT_FALSE(stored(held));
    EXPECT_TRUE(!fs::exists(m_store.tmp_dir()) || fs::is_empty(m_store.tmp_dir()))
        << "a partial download was left in the store's tmp/";

    // Wanted again, it is staged again: a stopped staging did not end.
    EXPECT_EQ(m_staging.stage(node(), {held}), std::set<std::string>{"held"});
    m_server.release_held();
    ASSERT_TRUE(wait_for_an_end());
    EXPECT_TRUE(m_staging.stage(node(), {held}).empty());
    EXPECT_TRUE(stored(held));
}

TEST_F(BackgroundStagingTest, AFailedStagingLetsTheNodeAskAndIsNotTriedAgain) {
    spec::ShimSpec wrong = shim("wrong");
    wrong.fetch.sha256 = std::string(64, 'a');
    EXPECT_EQ(m_staging.stage(node(), {wrong}), std::set<std::string>{"wrong"});
    ASSERT_TRUE(wait_for_an_end());
    EXPECT_TRUE(m_staging.stage(node(), {wrong}).empty());
    EXPECT_TRUE(m_staging.stage(node(), {wrong}).empty());
    EXPECT_EQ(requests_for("wrong", false), 1);
    EXPECT_TRUE(logged("wrong: could not stage ahead of its rollout slot"));
    EXPECT_FALSE(stored(wrong));
}

TEST_F(BackgroundStagingTest, AnUnpinnedOrStoredArtifactStartsNoStaging) {
    spec::ShimSpec loose = shim("loose");
    loose.fetch.sha256.reset();
    EXPECT_TRUE(m_staging.stage(node(), {loose}).empty());
    const spec::ShimSpec quick = shim("quick");
    EXPECT_EQ(m_staging.stage(node(), {quick}), std::set<std::string>{"quick"});
    ASSERT_TRUE(wait_for_an_end());
    BackgroundStaging restarted(
        m_log, [] { return std::make_unique<fetch::CurlDownloader>(fetch::ProgressStyle::none); });
    EXPECT_TRUE(restarted.stage(node(), {quick, loose}).empty());
    EXPECT_EQ(m_server.total_requests(), 1);
}

// The daemon stopping (SIGTERM) destroys its staging while a download is held: the destructor
// stops it rather than waiting for a release that never comes (the test would time out).
TEST_F(BackgroundStagingTest, StoppingEndsAHeldDownloadAndStoresNothing) {
    const spec::ShimSpec held = shim("held", true);
    {
        BackgroundStaging staging(m_log, [] {
            return std::make_unique<fetch::CurlDownloader>(fetch::ProgressStyle::none);
        });
        EXPECT_EQ(staging.stage(node(), {held}), std::set<std::string>{"held"});
        ASSERT_NO_FATAL_FAILURE(wait_for_request("held"));
    }
    EXPECT_FALSE(stored(held));
    EXPECT_TRUE(logged("held: staging ahead of its rollout slot stopped; nothing was stored"));
}

} // namespace reconcile_background_staging
} // namespace
} // namespace shimkeeper::reconcile
