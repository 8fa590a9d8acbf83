// unpack() on gzip layers that igzip inflates (archive/gzip_inflater.cpp), made by the real
// tools: streams longer than one block, several members, every optional header field, bytes
// after the last member, and damaged or cut-short files, each refused with what is wrong.
#include "shimkeeper/archive/unpack.hpp"
#include "unpack_folder.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace shimkeeper::archive {
namespace {
namespace archive_gzip {

namespace fs = std::filesystem;

class ArchiveGzip : public shimkeeper::testing::UnpackFolder {
protected:
    void SetUp() override {
        UnpackFolder::SetUp();
        // Several inflated blocks' worth: random bytes (stored blocks) and text (Huffman codes
        // and back-references), beside the shim.
        sh("head -c 3000000 /dev/urandom > src/random && seq 1 400000 > src/counting"
           " && cp /bin/true src/containerd-shim-demo-v2 && tar -C src -cf a.tar .");
    }

    // Every file of the source tree is in dest with the same bytes.
    void expect_tree_unpacked(const util::Expected<UnpackResult>& result) {
        ASSERT_TRUE(result.has_value()) << result.error().message();
        EXPECT_TRUE(result->was_archive);
        sh("cmp src/random dest/random && cmp src/counting dest/counting"
           " && cmp src/containerd-shim-demo-v2 dest/containerd-shim-demo-v2");
    }

    void expect_refused(const util::Expected<UnpackResult>& result, const std::string& why) {
        ASSERT_FALSE(result.has_value()) << "unpacked what should have been refused";
        EXPECT_EQ(result.error().code(), util::ErrorCode::archive);
        EXPECT_NE(result.error().message().find(why), std::string::npos)
            << result.error().message();
    }
};

TEST_F(ArchiveGzip, AStreamOfManyBlocksComesOutWhole) {
    sh("gzip -9 -c a.tar > a.tar.gz");
    expect_tree_unpacked(unpack_file("a.tar.gz"));
}

// gzip(1) and libarchive read concatenated members as one stream (pigz and parallel
// compressors write them); the tar here is cut mid-entry between the two members.
TEST_F(ArchiveGzip, ConcatenatedMembersAreOneStream) {
    sh("head -c 1500000 a.tar | gzip -c > a.tar.gz && tail -c +1500001 a.tar | gzip -1 -c >> "
       "a.tar.gz");
    expect_tree_unpacked(unpack_file("a.tar.gz"));
}

// A name, a comment, an extra field and a header CRC: igzip reads past each.
TEST_F(ArchiveGzip, EveryOptionalHeaderFieldIsReadPast) {
    sh("python3 -S -c '"
       "import struct, zlib\n"
       "data = open(\"a.tar\", \"rb\").read()\n"
       "deflate = zlib.compressobj(6, zlib.DEFLATED, -15)\n"
       "body = deflate.compress(data) + deflate.flush()\n"
       "extra = b\"sk\" + struct.pack(\"<H\", 3) + b\"abc\"\n"
       "head = b\"\\x1f\\x8b\\x08\" + bytes([2 | 4 | 8 | 16]) + struct.pack(\"<I\", 0) + "
       "b\"\\x00\\x03\"\n"
       "head += struct.pack(\"<H\", len(extra)) + extra + b\"a.tar\\x00\" + b\"a comment\\x00\"\n"
       "head += struct.pack(\"<H\", zlib.crc32(head) & 0xFFFF)\n"
       "trailer = struct.pack(\"<II\", zlib.crc32(data), len(data) & 0xFFFFFFFF)\n"
       "open(\"a.tar.gz\", \"wb\").write(head + body + trailer)'");
    sh("gzip -t a.tar.gz"); // the real tool agrees the file is good
    expect_tree_unpacked(unpack_file("a.tar.gz"));
}

TEST_F(ArchiveGzip, BytesAfterTheLastMemberAreIgnored) {
    sh("gzip -c a.tar > a.tar.gz && head -c 1000 /dev/zero >> a.tar.gz");
    expect_tree_unpacked(unpack_file("a.tar.gz"));
}

// Zeros after the tar's end, inflated to check the trailer: counted, and refused past the
// unpack's total limit rather than inflated for as long as they go on.
TEST_F(ArchiveGzip, AStreamGoingOnPastTheArchivesEndIsRefusedPastTheTotalLimit) {
    sh("tar -C src -cf small.tar containerd-shim-demo-v2"
       " && { cat small.tar; head -c 3000000 /dev/zero; } | gzip -c > a.tar.gz");
    expect_refused(unpack_file("a.tar.gz", UnpackLimits{.max_total_size = 2'000'000}),
                   "goes on for more than 2000000 bytes after the archive's end");
    fs::remove_all(dest());
    fs::create_directory(dest());
    ASSERT_TRUE(unpack_file("a.tar.gz").has_value()) << "under the default limit it unpacks";
}

TEST_F(ArchiveGzip, ACutShortFileIsRefusedAsTruncated) {
    sh("gzip -c a.tar | head -c 1200000 > a.tar.gz");
    expect_refused(unpack_file("a.tar.gz"), "the file is truncated");
}

// Cut inside the 8-byte trailer: every entry is whole, but the file still is not.
TEST_F(ArchiveGzip, AFileCutInsideItsTrailerIsRefused) {
    sh("gzip -c a.tar > whole.gz && head -c $(($(stat -c %s whole.gz) - 4)) whole.gz > a.tar.gz");
    expect_refused(unpack_file("a.tar.gz"), "the file is truncated");
}

TEST_F(ArchiveGzip, AWrongCrcIsRefused) {
    // The trailer's first byte is the CRC-32's lowest.
    sh("gzip -c a.tar > a.tar.gz && size=$(stat -c %s a.tar.gz)"
       " && printf '\\x%02x' $(( $(od -An -tu1 -j $((size - 8)) -N1 a.tar.gz) ^ 0xff ))"
       " | dd of=a.tar.gz bs=1 seek=$((size - 8)) conv=notrunc status=none");
    expect_refused(unpack_file("a.tar.gz"), "CRC-32");
}

// A good member, then one whose first block has the type deflate reserves (binary 11).
TEST_F(ArchiveGzip, AnInvalidDeflateBlockIsRefused) {
    sh("head -c 1500000 a.tar | gzip -c > a.tar.gz"
       " && printf '\\037\\213\\010\\000\\000\\000\\000\\000\\000\\003\\007' >> a.tar.gz");
    expect_refused(unpack_file("a.tar.gz"), "not valid gzip data: an invalid deflate block");
}

// Damage while libarchive is still choosing a format (a first member of 100 bytes, less than a
// tar header, then an invalid block): igzip's finding is reported, not "holds no tar" or
// libarchive's "Unrecognized archive format".
TEST_F(ArchiveGzip, DamageBeforeTheFirstEntryIsReportedAsDamage) {
    sh("head -c 100 a.tar | gzip -c > a.tar.gz"
       " && printf '\\037\\213\\010\\000\\000\\000\\000\\000\\000\\003\\007' >> a.tar.gz");
    expect_refused(unpack_file("a.tar.gz"), "not valid gzip data: an invalid deflate block");
}

} // namespace archive_gzip
} // namespace
} // namespace shimkeeper::archive
