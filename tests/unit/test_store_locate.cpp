// locate_binary on artifacts really unpacked from tarballs made by tar.
#include "shimkeeper/archive/unpack.hpp"
#include "shimkeeper/store/locate_binary.hpp"
#include "shimkeeper/store/store.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace shimkeeper::store {
namespace {
namespace store_locate {

namespace fs = std::filesystem;

const std::string k_binary = "containerd-shim-demo-v2";

class LocateBinary : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sk-locate-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
        fs::create_directories(m_dir / "src");
        fs::create_directories(m_dir / "dest");
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "kept test directory " << m_dir << "\n";
        } else {
            fs::remove_all(m_dir);
        }
    }

    void file(const std::string& relative, fs::perms mode = fs::perms(0755)) {
        fs::create_directories((m_dir / "src" / relative).parent_path());
        std::ofstream(m_dir / "src" / relative) << "#!/bin/sh\n";
        fs::permissions(m_dir / "src" / relative, mode);
    }

    // Tars src/, unpacks it into dest/ and looks for the demo binary.
    util::Expected<std::string> locate() {
        std::string command = "tar -C '" + (m_dir / "src").string() + "' -czf '" +
                              (m_dir / "a.tar.gz").string() + "' .";
        EXPECT_EQ(std::system(command.c_str()), 0);
        auto unpacked = archive::unpack(m_dir / "a.tar.gz", m_dir / "dest", k_binary);
        EXPECT_TRUE(unpacked.has_value()) << unpacked.error().message();
        if (!unpacked) {
            return std::unexpected(unpacked.error());
        }
        return locate_binary(*unpacked, m_dir / "dest", k_binary);
    }

    fs::path m_dir;
};

TEST_F(LocateBinary, TopLevelWinsOverNestedCopies) {
    file(k_binary);
    file("extra/" + k_binary);
    auto found = locate();
    ASSERT_TRUE(found.has_value()) << found.error().message();
    EXPECT_EQ(*found, k_binary);
}

TEST_F(LocateBinary, TheOnlyNestedOneIsFound) {
    file("demo-0.1.0-linux-amd64/" + k_binary);
    file("demo-0.1.0-linux-amd64/README", fs::perms(0644));
    auto found = locate();
    ASSERT_TRUE(found.has_value()) << found.error().message();
    EXPECT_EQ(*found, "demo-0.1.0-linux-amd64/" + k_binary);
}

TEST_F(LocateBinary, MissingBinaryListsWhatTheArtifactHolds) {
    file("containerd-shim-other-v2");
    file("LICENSE", fs::perms(0644));
    auto found = locate();
    ASSERT_FALSE(found.has_value());
    EXPECT_EQ(found.error().code(), util::ErrorCode::archive);
    const std::string& message = found.error().message();
    EXPECT_NE(message.find("no file named '" + k_binary + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("containerd-shim-other-v2 (executable)"), std::string::npos) << message;
    EXPECT_NE(message.find("LICENSE"), std::string::npos) << message;
}

TEST_F(LocateBinary, LongListingsAreCut) {
    for (int i = 0; i < 30; ++i) {
        file("f" + std::to_string(i), fs::perms(0644));
    }
    auto found = locate();
    ASSERT_FALSE(found.has_value());
    EXPECT_NE(found.error().message().find("(10 more)"), std::string::npos)
        << found.error().message();
}

TEST_F(LocateBinary, NotExecutableIsRefused) {
    file(k_binary, fs::perms(0644));
    auto found = locate();
    ASSERT_FALSE(found.has_value());
    EXPECT_NE(found.error().message().find("is not executable (mode 644)"), std::string::npos)
        << found.error().message();
}

TEST_F(LocateBinary, SymlinkIsRefused) {
    file("real-shim");
    fs::create_symlink("real-shim", m_dir / "src" / k_binary);
    auto found = locate();
    ASSERT_FALSE(found.has_value());
    EXPECT_NE(found.error().message().find("is a symlink to 'real-shim'"), std::string::npos)
        << found.error().message();
}

TEST_F(LocateBinary, TwoNestedCandidatesAreAmbiguous) {
    file("a/" + k_binary);
    file("b/" + k_binary);
    auto found = locate();
    ASSERT_FALSE(found.has_value());
    EXPECT_NE(found.error().message().find("2 files named"), std::string::npos)
        << found.error().message();
}

// A shim already in the store is found again from the store's own listing (no new download).
TEST_F(LocateBinary, StoredArtifactListingFindsTheSameBinary) {
    file("demo/" + k_binary);
    file("demo/LICENSE", fs::perms(0644));
    fs::create_symlink(k_binary, m_dir / "src" / "demo" / "alias");
    auto from_archive = locate();
    ASSERT_TRUE(from_archive.has_value()) << from_archive.error().message();

    Store store(util::HostRoot(m_dir / "node"), "/var/lib/shimkeeper");
    ASSERT_TRUE(store.ensure_layout().has_value());
    const std::string digest(64, 'e');
    ASSERT_TRUE(store.commit_artifact(m_dir / "dest", digest).has_value());
    auto listing = store.artifact_listing(digest);
    ASSERT_TRUE(listing.has_value()) << listing.error().message();
    ASSERT_EQ(listing->files.size(), 4u); // demo/, demo/LICENSE, demo/alias, demo/<binary>
    EXPECT_EQ(listing->files[0].kind, archive::EntryKind::directory);
    EXPECT_EQ(listing->files[2].kind, archive::EntryKind::symlink);
    EXPECT_EQ(listing->files[2].link_target, k_binary);
    auto from_store = locate_binary(*listing, store.artifact_dir(digest), k_binary);
    ASSERT_TRUE(from_store.has_value()) << from_store.error().message();
    EXPECT_EQ(*from_store, *from_archive);
}

} // namespace store_locate
} // namespace
} // namespace shimkeeper::store
