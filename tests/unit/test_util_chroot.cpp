// Telling a chroot into an image root from the running system's root, on the real disk.
#include "shimkeeper/util/chroot.hpp"
#include "support/temp_dir_test.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace shimkeeper::util {
namespace {
namespace util_chroot {

namespace fs = std::filesystem;

class ChrootTest : public shimkeeper::testing::TempDirTest {};

TEST_F(ChrootTest, SameRootAsInitIsTheRunningSystem) {
    EXPECT_FALSE(inside_chroot(m_dir, m_dir));
}

TEST_F(ChrootTest, AnotherRootThanInitsIsAChroot) {
    fs::create_directory(m_dir / "image");
    EXPECT_TRUE(inside_chroot(m_dir, m_dir / "image"));
}

TEST_F(ChrootTest, NoProcIsNoRunningSystem) {
    EXPECT_TRUE(inside_chroot(m_dir / "proc/1/root", m_dir));
}

TEST_F(ChrootTest, AnUnreadableOwnRootIsNotTakenForAChroot) {
    EXPECT_FALSE(inside_chroot(m_dir, m_dir / "missing"));
}

} // namespace util_chroot
} // namespace
} // namespace shimkeeper::util
