// unpack() against hostile archives, crafted here with libarchive's write API (the real tools
// refuse to make most of them). Each must fail with ErrorCode::archive, name the entry, and
// leave everything outside the destination untouched.
#include "shimkeeper/archive/unpack.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>

namespace shimkeeper::archive {
namespace {
namespace archive_hostile {

namespace fs = std::filesystem;

// Writes a gzip-compressed pax tar entry by entry.
class TarWriter {
public:
    explicit TarWriter(const fs::path& file) : m_handle(archive_write_new()) {
        archive_write_set_format_pax_restricted(m_handle);
        archive_write_add_filter_gzip(m_handle);
        m_ok = archive_write_open_filename(m_handle, file.c_str()) == ARCHIVE_OK;
    }
    TarWriter(const TarWriter&) = delete;
    TarWriter& operator=(const TarWriter&) = delete;
    ~TarWriter() {
        archive_write_close(m_handle);
        archive_write_free(m_handle);
    }

    bool ok() const { return m_ok; }

    void file(const std::string& path, const std::string& data = "x", mode_t perm = 0644) {
        add(path, AE_IFREG, perm, data);
    }
    void dir(const std::string& path) { add(path, AE_IFDIR, 0755); }
    void symlink(const std::string& path, const std::string& target) {
        add(path, AE_IFLNK, 0777, "", target.c_str());
    }
    void hardlink(const std::string& path, const std::string& target) {
        add(path, AE_IFREG, 0644, "", nullptr, target.c_str());
    }
    void special(const std::string& path, mode_t type) { add(path, type, 0644); }

private:
    void add(const std::string& path, mode_t type, mode_t perm, const std::string& data = "",
             const char* symlink_target = nullptr, const char* hardlink_target = nullptr) {
        struct archive_entry* entry = archive_entry_new();
        archive_entry_set_pathname(entry, path.c_str());
        archive_entry_set_filetype(entry, type);
        archive_entry_set_perm(entry, perm);
        archive_entry_set_size(entry, static_cast<la_int64_t>(data.size()));
        if (symlink_target != nullptr) {
            archive_entry_set_symlink(entry, symlink_target);
        }
        if (hardlink_target != nullptr) {
            archive_entry_set_hardlink(entry, hardlink_target);
        }
        if (type == AE_IFCHR || type == AE_IFBLK) {
            archive_entry_set_rdevmajor(entry, 1);
            archive_entry_set_rdevminor(entry, 3);
        }
        m_ok = m_ok && archive_write_header(m_handle, entry) == ARCHIVE_OK;
        if (!data.empty()) {
            m_ok = m_ok && archive_write_data(m_handle, data.data(), data.size()) ==
                               static_cast<la_ssize_t>(data.size());
        }
        archive_entry_free(entry);
    }

    struct archive* m_handle;
    bool m_ok = false;
};

class ArchiveHostile : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sk-archive-hostile-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
        // dest is two levels down so that "../x" and "../../x" both land in m_dir/outside.
        fs::create_directories(dest());
        fs::create_directories(m_dir / "outside");
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "kept test directory " << m_dir << "\n";
        } else {
            fs::remove_all(m_dir);
        }
    }

    fs::path dest() const { return m_dir / "outside" / "staging" / "dest"; }
    fs::path archive_path() const { return m_dir / "hostile.tar.gz"; }

    // Unpacks the archive and expects a refusal mentioning `message_part`; nothing may appear
    // next to dest (outside/staging holds only dest, outside holds only staging).
    void expect_refused(const std::string& message_part) {
        auto result = unpack(archive_path(), dest(), "shim");
        ASSERT_FALSE(result.has_value()) << "hostile archive was unpacked";
        EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
        EXPECT_NE(result.error().message().find(message_part), std::string::npos)
            << "message: " << result.error().message();
        std::vector<std::string> outside;
        for (const auto& entry : fs::directory_iterator(m_dir / "outside")) {
            outside.push_back(entry.path().filename());
        }
        for (const auto& entry : fs::directory_iterator(m_dir / "outside" / "staging")) {
            outside.push_back(entry.path().filename());
        }
        EXPECT_EQ(outside, (std::vector<std::string>{"staging", "dest"}));
    }

    fs::path m_dir;
};

TEST_F(ArchiveHostile, AbsolutePath) {
    {
        TarWriter tar(archive_path());
        tar.file("/tmp/sk-hostile-absolute");
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("entry '/tmp/sk-hostile-absolute' is an absolute path");
    EXPECT_FALSE(fs::exists("/tmp/sk-hostile-absolute"));
}

TEST_F(ArchiveHostile, DotDotPath) {
    for (const std::string path : {"../../x", "a/../../../x"}) {
        SCOPED_TRACE(path);
        {
            TarWriter tar(archive_path());
            tar.file("ok");
            tar.file(path);
            ASSERT_TRUE(tar.ok());
        }
        expect_refused("entry '" + path + "' escapes the archive root");
        fs::remove_all(dest());
        fs::create_directory(dest());
    }
}

TEST_F(ArchiveHostile, AbsoluteSymlink) {
    {
        TarWriter tar(archive_path());
        tar.symlink("evil", "/etc");
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("symlink 'evil' -> '/etc' points to an absolute path");
}

TEST_F(ArchiveHostile, RelativeSymlinkEscaping) {
    {
        TarWriter tar(archive_path());
        tar.dir("sub");
        tar.symlink("sub/evil", "../../x");
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("symlink 'sub/evil' -> '../../x' escapes the archive root");
    EXPECT_FALSE(fs::is_symlink(dest() / "sub" / "evil"));
}

// A symlink that is harmless by itself must still never be written through.
TEST_F(ArchiveHostile, FileThroughAnEarlierSymlink) {
    {
        TarWriter tar(archive_path());
        tar.dir("real");
        tar.symlink("link", "real");
        tar.file("link/planted", "payload");
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("entry 'link/planted' would be written through 'link'");
    EXPECT_FALSE(fs::exists(dest() / "real" / "planted"));
}

TEST_F(ArchiveHostile, HardLink) {
    {
        TarWriter tar(archive_path());
        tar.file("a");
        tar.hardlink("b", "a");
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("entry 'b' is a hard link to 'a'");
    EXPECT_FALSE(fs::exists(dest() / "b"));
}

TEST_F(ArchiveHostile, DevicesAndFifos) {
    const std::pair<mode_t, std::string> cases[] = {
        {AE_IFCHR, "entry 'dev' is a character device"},
        {AE_IFBLK, "entry 'dev' is a block device"},
        {AE_IFIFO, "entry 'dev' is a FIFO"},
    };
    for (const auto& [type, message] : cases) {
        SCOPED_TRACE(message);
        {
            TarWriter tar(archive_path());
            tar.special("dev", type);
            ASSERT_TRUE(tar.ok());
        }
        expect_refused(message);
        EXPECT_FALSE(fs::exists(fs::symlink_status(dest() / "dev")));
    }
}

TEST_F(ArchiveHostile, DuplicateEntry) {
    {
        TarWriter tar(archive_path());
        tar.file("shim", "first", 0755);
        tar.file("shim", "second", 0755);
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("entry 'shim' appears more than once");
}

TEST_F(ArchiveHostile, FileReplacingAnImpliedDirectory) {
    {
        TarWriter tar(archive_path());
        tar.file("d/inner");
        tar.file("d");
        ASSERT_TRUE(tar.ok());
    }
    expect_refused("entry 'd' already exists");
}

TEST_F(ArchiveHostile, DeclaredSizeAboveTheLimitIsRefusedBeforeWriting) {
    {
        TarWriter tar(archive_path());
        tar.file("big", std::string(4096, 'z'));
        ASSERT_TRUE(tar.ok());
    }
    auto result = unpack(archive_path(), dest(), "shim", UnpackLimits{.max_entry_size = 1000});
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find("entry 'big' declares 4096 bytes"), std::string::npos)
        << result.error().message();
    EXPECT_FALSE(fs::exists(dest() / "big"));
}

} // namespace archive_hostile
} // namespace
} // namespace shimkeeper::archive
