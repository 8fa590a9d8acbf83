// A temporary folder for the unpack tests (archive_unpack, archive_gzip): src/ to pack from,
// dest/ to unpack into, shell commands run there, and unpack() of a file in it. Kept when the
// test failed, removed otherwise.
#pragma once

#include "shimkeeper/archive/unpack.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <iostream>
#include <string>

namespace shimkeeper::testing {

class UnpackFolder : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "sk-unpack-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
        std::filesystem::create_directories(m_dir / "src");
        std::filesystem::create_directory(m_dir / "dest");
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "kept test directory " << m_dir << "\n";
        } else {
            std::filesystem::remove_all(m_dir);
        }
    }

    // Runs a shell command in the folder; the test fails if it does.
    void sh(const std::string& command) {
        std::string full = "cd '" + m_dir.string() + "' && " + command;
        ASSERT_EQ(std::system(full.c_str()), 0) << full;
    }

    util::Expected<archive::UnpackResult> unpack_file(const std::string& name,
                                                      const archive::UnpackLimits& limits = {}) {
        return archive::unpack(m_dir / name, dest(), "containerd-shim-demo-v2", limits);
    }

    std::filesystem::path dest() const { return m_dir / "dest"; }

    std::filesystem::path m_dir;
};

} // namespace shimkeeper::testing
