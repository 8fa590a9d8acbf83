// Store layout, artifact commits and bin/ links on the real disk, with a --root style HostRoot so
// that host paths and node paths differ as they do in a bake.
#include "shimkeeper/store/store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <utime.h>

namespace shimkeeper::store {
namespace {
namespace store_store {

namespace fs = std::filesystem;

const std::string k_digest_a(64, 'a');
const std::string k_digest_b(64, 'b');

class StoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sk-store-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_root = pattern;
        // The store under test lives at <root>/var/lib/shimkeeper, its node path.
        m_store.emplace(util::HostRoot(m_root), "/var/lib/shimkeeper");
        ASSERT_TRUE(m_store->ensure_layout().has_value());
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "kept test directory " << m_root << "\n";
        } else {
            fs::remove_all(m_root);
        }
    }

    // A staging folder in tmp/ holding one executable, as fetch leaves it after unpacking.
    fs::path staging_with(const std::string& content) {
        fs::path staging = m_store->tmp_dir() / ("staging-" + std::to_string(m_counter++));
        fs::create_directories(staging / "bin");
        fs::permissions(staging, fs::perms(0700)); // as mkdtemp makes it
        std::ofstream(staging / "bin" / "shim") << content;
        fs::permissions(staging / "bin" / "shim", fs::perms(0755));
        return staging;
    }

    std::string read(const fs::path& file) {
        std::ifstream in(file);
        std::ostringstream text;
        text << in.rdbuf(); // not istreambuf_iterator: GCC 12 -Wnull-dereference false positive
        return text.str();
    }

    fs::path m_root;
    std::optional<Store> m_store;
    int m_counter = 0;
};

TEST_F(StoreTest, LayoutUnderTheHostRoot) {
    const Store& s = *m_store;
    ASSERT_TRUE(s.ensure_layout().has_value());
    for (const char* dir : {"store/sha256", "bin", "tmp", "state"}) {
        EXPECT_TRUE(fs::is_directory(m_root / "var/lib/shimkeeper" / dir)) << dir;
    }
    EXPECT_EQ(s.artifact_dir(k_digest_a), m_root / "var/lib/shimkeeper/store/sha256" / k_digest_a);
    EXPECT_EQ(s.binary_node_path("shim"), "/var/lib/shimkeeper/bin/shim");
}

TEST_F(StoreTest, CommitMovesTheWholeStagingFolderInOneStep) {
    const Store& s = *m_store;
    fs::path staging = staging_with("v1");
    ASSERT_TRUE(s.commit_artifact(staging, k_digest_a).has_value());
    EXPECT_FALSE(fs::exists(staging));
    EXPECT_TRUE(s.has_artifact(k_digest_a));
    EXPECT_EQ(read(s.artifact_dir(k_digest_a) / "bin" / "shim"), "v1");
    EXPECT_EQ(s.artifact_digests(), std::vector<std::string>{k_digest_a});
    EXPECT_EQ(fs::status(s.artifact_dir(k_digest_a)).permissions(), fs::perms(0755));
}

TEST_F(StoreTest, SecondCommitOfTheSameDigestKeepsTheFirstAndDropsStaging) {
    const Store& s = *m_store;
    ASSERT_TRUE(s.ensure_layout().has_value());
    ASSERT_TRUE(s.commit_artifact(staging_with("first"), k_digest_a).has_value());
    fs::path again = staging_with("second");
    ASSERT_TRUE(s.commit_artifact(again, k_digest_a).has_value());
    EXPECT_FALSE(fs::exists(again));
    EXPECT_EQ(read(s.artifact_dir(k_digest_a) / "bin" / "shim"), "first");
}

TEST_F(StoreTest, CommitRefusesAnythingButADigest) {
    const Store& s = *m_store;
    fs::path staging = staging_with("x");
    auto result = s.commit_artifact(staging, "../../etc");
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::invalid_input);
    EXPECT_TRUE(fs::exists(staging));
}

TEST_F(StoreTest, LinkFlipsToTheNewArtifactAndHoldsTheNodePath) {
    const Store& s = *m_store;
    ASSERT_TRUE(s.commit_artifact(staging_with("old"), k_digest_a).has_value());
    ASSERT_TRUE(s.commit_artifact(staging_with("new"), k_digest_b).has_value());
    ASSERT_TRUE(s.link_binary("containerd-shim-x-v2", k_digest_a, "bin/shim").has_value());
    EXPECT_EQ(s.binary_link_target("containerd-shim-x-v2"),
              "/var/lib/shimkeeper/store/sha256/" + k_digest_a + "/bin/shim");
    ASSERT_TRUE(s.link_binary("containerd-shim-x-v2", k_digest_b, "bin/shim").has_value());
    EXPECT_EQ(s.binary_link_target("containerd-shim-x-v2"),
              "/var/lib/shimkeeper/store/sha256/" + k_digest_b + "/bin/shim");
    // Seen through the host root, the node path resolves to the new binary.
    fs::path link = s.bin_dir() / "containerd-shim-x-v2";
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read(m_root / fs::read_symlink(link).relative_path()), "new");
    // No temp names are left beside the link.
    EXPECT_EQ(std::distance(fs::directory_iterator(s.bin_dir()), fs::directory_iterator()), 1);
}

TEST_F(StoreTest, LinkToAMissingArtifactIsRefused) {
    const Store& s = *m_store;
    auto result = s.link_binary("shim", k_digest_a, "bin/shim");
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::not_found);
    EXPECT_FALSE(s.binary_link_target("shim").has_value());
}

TEST_F(StoreTest, UnlinkRemovesOnlySymlinks) {
    const Store& s = *m_store;
    ASSERT_TRUE(s.commit_artifact(staging_with("v"), k_digest_a).has_value());
    ASSERT_TRUE(s.link_binary("shim", k_digest_a, "bin/shim").has_value());
    ASSERT_TRUE(s.unlink_binary("shim").has_value());
    EXPECT_FALSE(fs::exists(fs::symlink_status(s.bin_dir() / "shim")));
    EXPECT_TRUE(s.unlink_binary("shim").has_value()); // already gone: fine
    std::ofstream(s.bin_dir() / "someone-elses") << "x";
    auto refused = s.unlink_binary("someone-elses");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code(), util::ErrorCode::conflict);
    EXPECT_TRUE(fs::exists(s.bin_dir() / "someone-elses"));
}

TEST_F(StoreTest, CleanTmpRemovesOnlyStaleLeftovers) {
    const Store& s = *m_store;
    fs::path stale = staging_with("crashed run");
    fs::path fresh = staging_with("run in progress");
    struct utimbuf old_times {
        1'000'000, 1'000'000
    };
    ASSERT_EQ(::utime(stale.c_str(), &old_times), 0);
    ASSERT_TRUE(s.clean_tmp().has_value());
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_TRUE(fs::exists(fresh));
    ASSERT_TRUE(s.clean_tmp(std::chrono::seconds{0}).has_value());
    EXPECT_FALSE(fs::exists(fresh));
}

} // namespace store_store
} // namespace
} // namespace shimkeeper::store
