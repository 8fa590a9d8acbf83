// A GoogleTest fixture with one fresh folder on the real disk per test (m_dir), removed when
// the test passes and kept, its path printed, when it fails.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace shimkeeper::testing {

class TempDirTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (std::filesystem::temp_directory_path() / "sk-test-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "kept test directory " << m_dir << "\n";
        } else {
            std::filesystem::remove_all(m_dir);
        }
    }

    std::filesystem::path m_dir;
};

} // namespace shimkeeper::testing
