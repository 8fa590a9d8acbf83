// Following a config's symlink chain on a real disk, under a root as `--root` uses it.
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/symlink_chain.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace shimkeeper::util {
namespace {
namespace util_symlink_chain {

namespace fs = std::filesystem;

class SymlinkChainTest : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(m_dir / "etc/containerd");
        fs::create_directories(m_dir / "srv/managed");
        std::ofstream(m_dir / "srv/managed/config.toml") << "version = 2\n";
    }
    void TearDown() override {
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        }
    }
    fs::path node(const char* path) const { return fs::path(path); }

    fs::path m_dir = make_temp_dir(fs::temp_directory_path(), "sk-links-").value();
    HostRoot m_root{m_dir};
};

TEST_F(SymlinkChainTest, RegularFileIsItsOwnEnd) {
    auto r = resolve_symlinks(m_root, "/srv/managed/config.toml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->node_path, "/srv/managed/config.toml");
    EXPECT_TRUE(r->through.empty());
}

TEST_F(SymlinkChainTest, AbsoluteLinkIsANodePathUnderTheRoot) {
    fs::create_symlink("/srv/managed/config.toml", m_dir / "etc/containerd/config.toml");
    auto r = resolve_symlinks(m_root, "/etc/containerd/config.toml");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->node_path, "/srv/managed/config.toml");
    EXPECT_EQ(r->host_path, m_dir / "srv/managed/config.toml");
    EXPECT_EQ(r->through, std::vector<fs::path>{"/etc/containerd/config.toml"});
}

TEST_F(SymlinkChainTest, ChainOfTwoWithARelativeLink) {
    fs::create_symlink("../../srv/managed/config.toml", m_dir / "etc/containerd/real.toml");
    fs::create_symlink("real.toml", m_dir / "etc/containerd/config.toml");
    auto r = resolve_symlinks(m_root, "/etc/containerd/config.toml");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->node_path, "/srv/managed/config.toml");
    EXPECT_EQ(r->through.size(), 2u);
}

TEST_F(SymlinkChainTest, LoopIsAClearError) {
    fs::create_symlink("b.toml", m_dir / "etc/containerd/a.toml");
    fs::create_symlink("a.toml", m_dir / "etc/containerd/b.toml");
    auto r = resolve_symlinks(m_root, "/etc/containerd/a.toml");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("symlink loop"), std::string::npos) << r.error().message();
}

TEST_F(SymlinkChainTest, RelativeLinkClimbingAboveTheRootIsRefused) {
    fs::create_symlink("../../../../outside.toml", m_dir / "etc/containerd/config.toml");
    auto r = resolve_symlinks(m_root, "/etc/containerd/config.toml");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("outside the root"), std::string::npos)
        << r.error().message();
}

TEST_F(SymlinkChainTest, DanglingLinkLeadsToTheFileToCreate) {
    fs::create_symlink("/srv/managed/new.toml", m_dir / "etc/containerd/config.toml");
    auto r = resolve_symlinks(m_root, "/etc/containerd/config.toml");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->node_path, "/srv/managed/new.toml");
}

} // namespace util_symlink_chain
} // namespace
} // namespace shimkeeper::util
