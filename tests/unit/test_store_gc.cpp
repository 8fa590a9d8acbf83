// Garbage collection on a real store: what survives is what a rollback or a running shim needs.
#include "shimkeeper/store/store.hpp"

#include "shimkeeper/store/oci_record.hpp"
#include "shimkeeper/store/tamper.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace shimkeeper::store {
namespace {
namespace store_gc {

namespace fs = std::filesystem;

std::string digest(char c) {
    return std::string(64, c);
}

class StoreGarbage : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sk-gc-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_root = pattern;
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

    void add_artifact(const std::string& d) {
        fs::path staging = m_store->tmp_dir() / ("staging-" + d.substr(0, 1));
        fs::create_directories(staging);
        std::ofstream(staging / "shim") << d;
        fs::permissions(staging / "shim", fs::perms(0755));
        ASSERT_TRUE(m_store->commit_artifact(staging, d).has_value());
    }

    // Generations 1..5, generation N using artifact digest('0' + N); `current` as given.
    void write_generations(std::optional<int> current) {
        StoreState state;
        for (int n = 1; n <= 5; ++n) {
            std::string d = digest(static_cast<char>('0' + n));
            add_artifact(d);
            InstalledShim shim;
            shim.name = "demo";
            shim.binary = "containerd-shim-demo-v2";
            shim.binary_path = "shim";
            shim.digest = d;
            state.generations.push_back(Generation{n, "t" + std::to_string(n), {shim}});
        }
        state.current = current;
        ASSERT_TRUE(m_store->save_state(state).has_value());
    }

    fs::path m_root;
    std::optional<Store> m_store;
};

TEST_F(StoreGarbage, KeepsTheNewestGenerationsAndTheCurrentOne) {
    write_generations(3);      // rolled back to 3 after 4 and 5 were made
    add_artifact(digest('9')); // fetched, never installed
    auto removed = m_store->collect_garbage(2);
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, (std::vector<std::string>{digest('1'), digest('2'), digest('9')}));
    EXPECT_EQ(m_store->artifact_digests(),
              (std::vector<std::string>{digest('3'), digest('4'), digest('5')}));

    auto state = m_store->load_state();
    ASSERT_TRUE(state.has_value());
    std::vector<int> numbers;
    for (const Generation& generation : state->generations) {
        numbers.push_back(generation.number);
    }
    EXPECT_EQ(numbers, (std::vector<int>{3, 4, 5}));
    EXPECT_EQ(state->current, 3);
    // The doomed artifacts went through tmp/ and are gone from there too.
    EXPECT_TRUE(fs::is_empty(m_store->tmp_dir()));
}

TEST_F(StoreGarbage, NeverRemovesWhatABinLinkPointsTo) {
    write_generations(5);
    ASSERT_TRUE(m_store->link_binary("containerd-shim-old-v2", digest('1'), "shim").has_value());
    auto removed = m_store->collect_garbage(1);
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, (std::vector<std::string>{digest('2'), digest('3'), digest('4')}));
    EXPECT_TRUE(m_store->has_artifact(digest('1')));
    EXPECT_TRUE(m_store->has_artifact(digest('5')));
    // The link holds the node path; below the test's root it still resolves to a file.
    fs::path target = fs::read_symlink(m_store->bin_dir() / "containerd-shim-old-v2");
    EXPECT_TRUE(fs::is_regular_file(m_root / target.relative_path()));
}

TEST_F(StoreGarbage, AnArtifactAskedToBeKeptStaysThoughNoGenerationUsesIt) {
    write_generations(5);
    add_artifact(digest('8')); // fetched, never installed
    add_artifact(digest('9')); // staged ahead of a rollout slot
    auto removed = m_store->collect_garbage(1, "/proc", {digest('9')});
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, (std::vector<std::string>{digest('1'), digest('2'), digest('3'),
                                                  digest('4'), digest('8')}));
    EXPECT_TRUE(m_store->has_artifact(digest('9')));
}

TEST_F(StoreGarbage, NothingToCollectLeavesStateAlone) {
    write_generations(5);
    auto before = fs::last_write_time(m_store->state_dir() / "state.json");
    auto removed = m_store->collect_garbage(10);
    ASSERT_TRUE(removed.has_value());
    EXPECT_TRUE(removed->empty());
    EXPECT_EQ(m_store->artifact_digests().size(), 5u);
    EXPECT_EQ(fs::last_write_time(m_store->state_dir() / "state.json"), before);
}

TEST_F(StoreGarbage, CorruptStateStopsCollection) {
    write_generations(5);
    std::ofstream(m_store->state_dir() / "state.json") << "{";
    auto removed = m_store->collect_garbage(1);
    ASSERT_FALSE(removed.has_value());
    EXPECT_EQ(m_store->artifact_digests().size(), 5u);
}

// containerd runs an old shim binary again to delete its container long after an upgrade: a
// process executing an artifact keeps it, however old its generation, until the process ends.
TEST_F(StoreGarbage, KeepsAnArtifactARunningProcessExecutes) {
    write_generations(5);
    fs::path binary = m_store->artifact_dir(digest('1')) / "shim";
    fs::permissions(binary, fs::perms::owner_write, fs::perm_options::add);
    fs::copy_file("/bin/sleep", binary, fs::copy_options::overwrite_existing);
    pid_t pid = 0;
    std::string path = binary.string();
    char arg[] = "30";
    char* argv[] = {path.data(), arg, nullptr};
    // posix_spawn returns once the child has exec'd: its /proc/<pid>/exe is the stored binary.
    ASSERT_EQ(::posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv, environ), 0);

    auto removed = m_store->collect_garbage(1);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, (std::vector<std::string>{digest('2'), digest('3'), digest('4')}));
    EXPECT_TRUE(m_store->has_artifact(digest('1')));

    // The process is gone: the next collection removes the artifact.
    removed = m_store->collect_garbage(1);
    ASSERT_TRUE(removed.has_value()) << removed.error().message();
    EXPECT_EQ(*removed, (std::vector<std::string>{digest('1')}));
}

TEST_F(StoreGarbage, ForgetsTheFingerprintsOfCollectedArtifacts) {
    write_generations(5);
    for (char c : {'1', '5'}) {
        ASSERT_TRUE(store::record_binary_fingerprint(*m_store, digest(c), "shim").has_value());
    }
    std::ofstream(m_store->state_dir() / "fingerprints" / digest('7')) << "left by a crash";
    ASSERT_TRUE(m_store->collect_garbage(1).has_value());
    EXPECT_FALSE(fs::exists(m_store->state_dir() / "fingerprints" / digest('1')));
    EXPECT_FALSE(fs::exists(m_store->state_dir() / "fingerprints" / digest('7')));
    EXPECT_TRUE(fs::exists(m_store->state_dir() / "fingerprints" / digest('5')));
}

TEST_F(StoreGarbage, ForgetsWhatOciReferencesResolvedToOnceTheirArtifactIsGone) {
    write_generations(5);
    for (char c : {'1', '5'}) {
        OciResolution record{"r.example.org/a@sha256:" + digest(c),
                             "shim",
                             "amd64",
                             "",
                             "sha256:" + digest('m'),
                             "sha256:" + digest('l'),
                             "image",
                             digest(c)};
        ASSERT_TRUE(save_oci_resolution(*m_store, "sha256:" + digest(c), record).has_value());
    }
    auto before = load_oci_resolution(*m_store, "sha256:" + digest('1'), "shim", "amd64");
    ASSERT_TRUE(before && *before);
    EXPECT_EQ((*before)->artifact_digest, digest('1'));
    EXPECT_FALSE(*load_oci_resolution(*m_store, "sha256:" + digest('1'), "other", "amd64"));

    ASSERT_TRUE(m_store->collect_garbage(1).has_value());
    EXPECT_FALSE(*load_oci_resolution(*m_store, "sha256:" + digest('1'), "shim", "amd64"));
    auto kept = load_oci_resolution(*m_store, "sha256:" + digest('5'), "shim", "amd64");
    ASSERT_TRUE(kept && *kept);
    EXPECT_EQ((*kept)->manifest_digest, "sha256:" + digest('m'));
}

} // namespace store_gc
} // namespace
} // namespace shimkeeper::store
