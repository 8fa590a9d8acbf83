#include "shimkeeper/containerd/version_cache.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>

namespace shimkeeper::containerd {
namespace {
namespace containerd_version_cache {

namespace fs = std::filesystem;

// A stand-in containerd that answers --version and counts how often it was asked.
class VersionCacheTest : public ::testing::Test {
protected:
    void SetUp() override { write_binary("1.7.2"); }
    void TearDown() override {
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        }
    }
    void write_binary(const std::string& version) {
        ASSERT_TRUE(util::write_file_atomic(
            m_binary,
            "#!/bin/sh\necho run >> " + (m_dir / "calls").string() +
                "\necho containerd github.com/containerd/containerd v" + version + " abc\n",
            0755));
    }
    int calls() const {
        auto text = util::read_file(m_dir / "calls");
        return text ? static_cast<int>(std::count(text->begin(), text->end(), '\n')) : 0;
    }

    fs::path m_dir = util::make_temp_dir(fs::temp_directory_path(), "sk-vcache-").value();
    fs::path m_binary = m_dir / "containerd";
    fs::path m_cache = m_dir / "state/containerd-version";
};

TEST_F(VersionCacheTest, SecondQueryOfTheSameBinaryRunsNothing) {
    auto first = cached_containerd_version(m_binary, m_cache);
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_EQ(first->to_string(), "1.7.2");
    auto second = cached_containerd_version(m_binary, m_cache);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->to_string(), "1.7.2");
    EXPECT_EQ(calls(), 1);
}

TEST_F(VersionCacheTest, ReplacedBinaryIsAskedAgain) {
    ASSERT_TRUE(cached_containerd_version(m_binary, m_cache));
    write_binary("2.0.1"); // a package upgrade: a new file under the same name
    auto after = cached_containerd_version(m_binary, m_cache);
    ASSERT_TRUE(after);
    EXPECT_EQ(after->to_string(), "2.0.1");
    EXPECT_EQ(calls(), 2);
}

TEST_F(VersionCacheTest, DamagedCacheIsIgnored) {
    fs::create_directories(m_cache.parent_path());
    ASSERT_TRUE(util::write_file_atomic(m_cache, "garbage"));
    auto version = cached_containerd_version(m_binary, m_cache);
    ASSERT_TRUE(version);
    EXPECT_EQ(version->to_string(), "1.7.2");
}

TEST_F(VersionCacheTest, WithoutACacheFileEveryQueryRuns) {
    ASSERT_TRUE(cached_containerd_version(m_binary, {}));
    ASSERT_TRUE(cached_containerd_version(m_binary, {}));
    EXPECT_EQ(calls(), 2);
}

} // namespace containerd_version_cache
} // namespace
} // namespace shimkeeper::containerd
