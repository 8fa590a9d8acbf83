// A gzip file's contents for libarchive, inflated by ISA-L's igzip instead of libarchive's own
// gzip filter (zlib). Why: inflating was most of a node's CPU for a staged artifact (a 4 MiB
// tar.gz of the runc shim: zlib 59% of `apply`'s samples in `perf`), and igzip inflates the same
// stream about five times faster (0.02 s against 0.10 s of CPU on the bench machine). A node
// staging ahead of its slot, or a thousand of them sharing a machine in bench/rollout, pays that
// CPU once per artifact. Only the gzip layer changes hands: libarchive still reads the tar or zip
// inside, with every check unpack() makes.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/fd.hpp"

#include <archive.h>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct inflate_state; // ISA-L's (isa-l/igzip_lib.h), included by gzip_inflater.cpp alone

namespace shimkeeper::archive {

// True when `magic` (a file's first bytes) opens a gzip member that uses deflate, the only
// method gzip defines; anything else goes to libarchive untouched.
bool is_gzip_magic(const std::string& magic);

class GzipInflater {
public:
    static util::Expected<std::unique_ptr<GzipInflater>> open(const std::filesystem::path& file);
    ~GzipInflater();
    GzipInflater(const GzipInflater&) = delete;
    GzipInflater& operator=(const GzipInflater&) = delete;

    // Opens `reader` (its filters and formats chosen) on the inflated bytes: libarchive's
    // status, as archive_read_open_filename's. This inflater must outlive the reader's use.
    int attach(struct archive* reader);

    // The next inflated block; empty at the end of the last gzip member. Concatenated members
    // are one stream, as gzip(1) reads them; bytes after the last member that do not begin
    // another are ignored, as libarchive's gzip filter did.
    util::Expected<std::span<const unsigned char>> next_block();

    // Why the last next_block() failed: libarchive may replace the message it was given by one
    // of its own ("Unrecognized archive format") when the failure came while it was choosing a
    // format.
    const std::optional<util::Error>& failure() const { return m_failure; }

private:
    GzipInflater(std::filesystem::path file, util::Fd fd);
    // Moves what is left of the input to the buffer's front and reads more behind it; false at
    // the end of the file.
    util::Expected<bool> refill();
    util::Expected<bool> next_member_follows();
    util::Error corrupt(int isal_status) const;

    std::filesystem::path m_file;
    util::Fd m_fd;
    bool m_end_of_file = false;
    bool m_done = false;
    std::uint64_t m_consumed = 0; // compressed bytes inflated, for error messages
    std::vector<unsigned char> m_in;
    std::vector<unsigned char> m_out;
    std::unique_ptr<inflate_state> m_state;
    std::optional<util::Error> m_failure;
};

} // namespace shimkeeper::archive
