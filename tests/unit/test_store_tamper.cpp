// The tamper check on a real store: a binary changed by hand is noticed, an untouched one is not,
// and two shims that take two binaries out of one artifact do not mistake each other for a change.
#include "shimkeeper/store/tamper.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "support/temp_dir_test.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>

namespace shimkeeper::store {
namespace {
namespace store_tamper {

namespace fs = std::filesystem;

const std::string k_digest(64, 'a');

class StoreTamper : public testing::TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        m_store.emplace(util::HostRoot(m_dir), "/var/lib/shimkeeper");
        ASSERT_TRUE(m_store->ensure_layout().has_value());
        const fs::path staging = m_store->tmp_dir() / "staging";
        fs::create_directories(staging / "bin");
        for (const char* name : {"bin/shim-a", "bin/shim b"}) {
            ASSERT_TRUE(util::write_file_atomic(staging / name, "#!/bin/sh\n", 0755));
        }
        ASSERT_TRUE(m_store->commit_artifact(staging, k_digest).has_value());
        ASSERT_TRUE(record_binary_fingerprint(*m_store, k_digest, "bin/shim-a").has_value());
    }

    Integrity check(const std::string& binary) {
        auto result = check_binary_fingerprint(*m_store, k_digest, binary);
        EXPECT_TRUE(result.has_value()) << result.error().message();
        return result.value_or(Integrity::changed);
    }
    void append(const std::string& binary) {
        std::ofstream(m_store->artifact_dir(k_digest) / binary, std::ios::app) << "echo injected\n";
    }
    fs::path record() const { return m_store->state_dir() / "fingerprints" / k_digest; }

    std::optional<Store> m_store;
};

TEST_F(StoreTamper, AnUntouchedBinaryIsIntactAndAnEditedOneIsChanged) {
    EXPECT_EQ(check("bin/shim-a"), Integrity::intact);
    append("bin/shim-a");
    EXPECT_EQ(check("bin/shim-a"), Integrity::changed);
}

TEST_F(StoreTamper, ADeletedBinaryIsChanged) {
    fs::remove(m_store->artifact_dir(k_digest) / "bin/shim-a");
    EXPECT_EQ(check("bin/shim-a"), Integrity::changed);
}

TEST_F(StoreTamper, TwoBinariesOfOneArtifactAreRecordedApart) {
    // The second shim's first use records its binary; neither is a change of the other.
    EXPECT_EQ(check("bin/shim b"), Integrity::intact);
    EXPECT_EQ(check("bin/shim-a"), Integrity::intact);
    EXPECT_EQ(check("bin/shim b"), Integrity::intact);
    append("bin/shim b");
    EXPECT_EQ(check("bin/shim b"), Integrity::changed);
    EXPECT_EQ(check("bin/shim-a"), Integrity::intact);
}

TEST_F(StoreTamper, ARecordOfTheOlderOneLineFormStandsForTheBinaryItWasWrittenFor) {
    // Before paths were recorded: the fingerprint alone on one line.
    std::string line = util::read_file(record()).value();
    line = line.substr(0, line.find(" bin/shim-a")) + "\n";
    ASSERT_TRUE(util::write_file_atomic(record(), line, 0600));
    EXPECT_EQ(check("bin/shim-a"), Integrity::intact);
    append("bin/shim-a");
    EXPECT_EQ(check("bin/shim-a"), Integrity::changed);
}

TEST_F(StoreTamper, RecordingAfterACommitForgetsTheOtherBinariesLines) {
    EXPECT_EQ(check("bin/shim b"), Integrity::intact);
    append("bin/shim-a");
    ASSERT_TRUE(record_binary_fingerprint(*m_store, k_digest, "bin/shim-a").has_value());
    EXPECT_EQ(check("bin/shim-a"), Integrity::intact);
    EXPECT_EQ(util::read_file(record()).value().find("shim b"), std::string::npos);
}

} // namespace store_tamper
} // namespace
} // namespace shimkeeper::store
