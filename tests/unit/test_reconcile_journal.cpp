// The write-ahead journal on a real disk: what is saved loads back whole, and a damaged file is
// an error that names the file and the field, never a silently empty journal.
#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_journal {

namespace fs = std::filesystem;

class JournalFile : public ::testing::Test {
protected:
    void TearDown() override {
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        }
    }
    fs::path m_dir = util::make_temp_dir(fs::temp_directory_path(), "sk-journal-").value();
    Journal m_journal{m_dir};
};

TEST_F(JournalFile, SavedEntryLoadsBackWhole) {
    JournalEntry entry;
    entry.id = "t1";
    entry.kind = "apply";
    entry.started = "2026-11-23T00:00:00Z";
    entry.from_generation = 3;
    entry.to_generation = 4;
    entry.shims = {"spin"};
    entry.files = {{"/etc/containerd/config.toml", true, "/b", std::string(64, 'a')}};
    entry.links = {{"containerd-shim-spin-v2", std::nullopt, "/store/x"}};
    entry.steps = {"fetch", "links"};
    entry.result = TxnResult::rolled_back;
    entry.reason = "unhealthy";
    entry.restarts = 2;
    ASSERT_TRUE(m_journal.save(entry));
    auto loaded = m_journal.load();
    ASSERT_TRUE(loaded) << loaded.error().message();
    ASSERT_TRUE(*loaded);
    const JournalEntry& e = **loaded;
    EXPECT_EQ(e.from_generation, 3);
    EXPECT_EQ(e.files[0].node_path, "/etc/containerd/config.toml");
    EXPECT_EQ(e.links[0].before, std::nullopt);
    EXPECT_EQ(e.links[0].after, "/store/x");
    EXPECT_EQ(e.steps, (std::vector<std::string>{"fetch", "links"}));
    EXPECT_EQ(e.result, TxnResult::rolled_back);
    EXPECT_EQ(e.restarts, 2);
}

TEST_F(JournalFile, DamagedEntryNamesTheFileAndTheField) {
    ASSERT_TRUE(util::write_file_atomic((m_dir / "journal.json"), R"({"id": "t1", "kind": 7})"));
    auto loaded = m_journal.load();
    ASSERT_FALSE(loaded);
    const std::string message = loaded.error().message();
    EXPECT_NE(message.find((m_dir / "journal.json").string()), std::string::npos) << message;
    EXPECT_NE(message.find("\"kind\" of type number"), std::string::npos) << message;
}

TEST_F(JournalFile, TruncatedFileIsAnErrorNotAnEmptyJournal) {
    ASSERT_TRUE(util::write_file_atomic((m_dir / "journal.json"), R"({"id": "t1", "ki)"));
    auto loaded = m_journal.load();
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message().find("not valid JSON"), std::string::npos);
}

} // namespace reconcile_journal
} // namespace
} // namespace shimkeeper::reconcile
