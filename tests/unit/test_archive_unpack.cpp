// unpack() on real archives made by the real tools (tar, gzip, xz, zstd, bzip2, zip) and on
// bare executables; the limits are exercised with a real compression bomb.
#include "shimkeeper/archive/unpack.hpp"
#include "unpack_folder.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace shimkeeper::archive {
namespace {
namespace archive_unpack {

namespace fs = std::filesystem;

class ArchiveUnpack : public shimkeeper::testing::UnpackFolder {
protected:
    void SetUp() override {
        UnpackFolder::SetUp();
        fs::create_directories(m_dir / "src" / "bin");
    }

    void write(const fs::path& relative, const std::string& content, fs::perms mode) {
        std::ofstream(m_dir / relative) << content;
        fs::permissions(m_dir / relative, mode);
    }

    // A typical shim release: the binary at the top, a licence, a nested helper.
    void make_release_tree() {
        write("src/containerd-shim-demo-v2", "#!/bin/sh\necho demo\n", fs::perms(0755));
        write("src/LICENSE", "licence text\n", fs::perms(0644));
        write("src/bin/helper", "#!/bin/sh\n", fs::perms(0750));
    }

    void expect_release_unpacked(const UnpackResult& result) {
        EXPECT_TRUE(result.was_archive);
        auto shim = dest() / "containerd-shim-demo-v2";
        ASSERT_TRUE(fs::is_regular_file(shim));
        EXPECT_EQ(fs::status(shim).permissions(), fs::perms(0755));
        EXPECT_EQ(fs::file_size(shim), 20u);
        EXPECT_EQ(fs::status(dest() / "LICENSE").permissions(), fs::perms(0644));
        EXPECT_EQ(fs::status(dest() / "bin" / "helper").permissions(), fs::perms(0750));
        bool listed = false;
        for (const auto& file : result.files) {
            if (file.path == "containerd-shim-demo-v2") {
                listed = true;
                EXPECT_TRUE(file.executable);
                EXPECT_EQ(file.size, 20u);
                EXPECT_EQ(file.kind, EntryKind::file);
            }
            if (file.path == "LICENSE") {
                EXPECT_FALSE(file.executable);
            }
        }
        EXPECT_TRUE(listed);
    }
};

TEST_F(ArchiveUnpack, TarWithEveryCompression) {
    make_release_tree();
    const std::pair<std::string, std::string> formats[] = {
        {"a.tar", ""},           {"a.tar.gz", "--gzip"},   {"a.tar.xz", "--xz"},
        {"a.tar.zst", "--zstd"}, {"a.tar.bz2", "--bzip2"},
    };
    for (const auto& [name, flag] : formats) {
        SCOPED_TRACE(name);
        sh("tar -C src " + flag + " -cf " + name + " .");
        auto result = unpack_file(name);
        ASSERT_TRUE(result.has_value()) << result.error().message();
        expect_release_unpacked(*result);
        fs::remove_all(dest());
        fs::create_directory(dest());
    }
}

TEST_F(ArchiveUnpack, Zip) {
    make_release_tree();
    sh("cd src && zip -q -r ../a.zip .");
    auto result = unpack_file("a.zip");
    ASSERT_TRUE(result.has_value()) << result.error().message();
    expect_release_unpacked(*result);
}

TEST_F(ArchiveUnpack, BareExecutableIsCopiedUnderTheBinaryName) {
    sh("cp /bin/true shim-download");
    auto result = unpack_file("shim-download");
    ASSERT_TRUE(result.has_value()) << result.error().message();
    EXPECT_FALSE(result->was_archive);
    ASSERT_EQ(result->files.size(), 1u);
    EXPECT_EQ(result->files[0].path, "containerd-shim-demo-v2");
    EXPECT_EQ(result->files[0].size, fs::file_size("/bin/true"));
    EXPECT_EQ(fs::status(dest() / "containerd-shim-demo-v2").permissions(), fs::perms(0755));
    sh("cmp /bin/true dest/containerd-shim-demo-v2");
}

TEST_F(ArchiveUnpack, CompressedNonArchiveIsRefusedNotRunAsABinary) {
    sh("gzip -c /bin/true > shim.gz");
    auto result = unpack_file("shim.gz");
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
    EXPECT_NE(result.error().message().find("gzip-compressed"), std::string::npos)
        << result.error().message();
}

TEST_F(ArchiveUnpack, EmptyDownloadIsRefused) {
    sh(": > empty");
    auto result = unpack_file("empty");
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find("is empty"), std::string::npos);
}

// Kept: rwxr-xr-x at most. containerd runs the shim as root, so nothing may be writable by others.
TEST_F(ArchiveUnpack, SetuidSetgidStickyAndOthersWriteBitsAreStripped) {
    write("src/containerd-shim-demo-v2", "#!/bin/sh\n", fs::perms(0755));
    sh("chmod 6777 src/containerd-shim-demo-v2 && mkdir src/d && chmod 1777 src/d");
    sh("tar -C src -czf a.tar.gz .");
    auto result = unpack_file("a.tar.gz");
    ASSERT_TRUE(result.has_value()) << result.error().message();
    struct stat info {};
    ASSERT_EQ(::stat((dest() / "containerd-shim-demo-v2").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0755u);
    ASSERT_EQ(::stat((dest() / "d").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0755u);
}

TEST_F(ArchiveUnpack, TooManyEntries) {
    sh("for i in 1 2 3 4 5 6; do echo $i > src/f$i; done && tar -C src -cf a.tar .");
    auto result = unpack_file("a.tar", UnpackLimits{.max_entries = 5});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
    EXPECT_NE(result.error().message().find("more than the limit of 5 entries"), std::string::npos)
        << result.error().message();
}

TEST_F(ArchiveUnpack, EntryLargerThanTheLimit) {
    sh("head -c 2000000 /dev/zero > src/big && tar -C src -czf a.tar.gz big");
    auto result = unpack_file("a.tar.gz", UnpackLimits{.max_entry_size = 1'000'000});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
    EXPECT_NE(result.error().message().find("entry 'big'"), std::string::npos)
        << result.error().message();
}

// A zip bomb's header may claim anything: the bytes actually decompressed are what count.
TEST_F(ArchiveUnpack, CompressionBombStopsAtTheTotalLimit) {
    sh("head -c 20000000 /dev/zero > src/zeros1 && cp src/zeros1 src/zeros2"
       " && cd src && zip -q -9 ../bomb.zip zeros1 zeros2");
    ASSERT_LT(fs::file_size(m_dir / "bomb.zip"), 200'000u);
    auto result = unpack_file(
        "bomb.zip", UnpackLimits{.max_entry_size = 30'000'000, .max_total_size = 30'000'000});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
    EXPECT_NE(result.error().message().find("in total"), std::string::npos)
        << result.error().message();
    std::uintmax_t written = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dest())) {
        written += entry.is_regular_file() ? entry.file_size() : 0;
    }
    EXPECT_LE(written, 30'000'000u);
}

// A zip whose headers claim 1000 bytes for a 20 MB entry: the limit holds on what is written.
TEST_F(ArchiveUnpack, LyingZipHeaderCannotBypassTheLimit) {
    sh("python3 -S - <<'EOF'\n"
       "import struct, zipfile\n"
       "with zipfile.ZipFile('liar.zip', 'w', zipfile.ZIP_DEFLATED) as z:\n"
       "    z.writestr('containerd-shim-demo-v2', bytes(20_000_000))\n"
       "data = bytearray(open('liar.zip', 'rb').read())\n"
       "for sig, offset in ((b'PK\\x03\\x04', 22), (b'PK\\x01\\x02', 24)):\n"
       "    at = data.find(sig)\n"
       "    struct.pack_into('<I', data, at + offset, 1000)\n"
       "open('liar.zip', 'wb').write(data)\n"
       "EOF");
    auto result = unpack_file("liar.zip", UnpackLimits{.max_entry_size = 1'000'000});
    // libarchive inflates past the claimed size; the bytes counted while writing stop it.
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
    EXPECT_NE(result.error().message().find("unpacks to more than the limit of 1000000 bytes"),
              std::string::npos)
        << result.error().message();
    std::error_code ec;
    EXPECT_LE(fs::file_size(dest() / "containerd-shim-demo-v2", ec), 1'000'000u);
}

TEST_F(ArchiveUnpack, DestinationMustExist) {
    make_release_tree();
    sh("tar -C src -cf a.tar .");
    auto result = unpack(m_dir / "a.tar", m_dir / "missing", "containerd-shim-demo-v2");
    ASSERT_FALSE(result.has_value());
    EXPECT_NE(result.error().message().find("missing"), std::string::npos);
}

} // namespace archive_unpack
} // namespace
} // namespace shimkeeper::archive
