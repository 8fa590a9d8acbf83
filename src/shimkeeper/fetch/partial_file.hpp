// The temp file a download streams into: created next to the store so that the caller can
// rename it into place, hashed while it is written, and removed unless the caller keeps it.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/fd.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace shimkeeper::fetch {

class PartialFile {
public:
    // A new empty file "<dir>/.fetch-XXXXXX.part".
    static util::Expected<PartialFile> create(const std::filesystem::path& dir);

    PartialFile(PartialFile&& other) noexcept;
    PartialFile& operator=(PartialFile&&) = delete;
    PartialFile(const PartialFile&) = delete;
    PartialFile& operator=(const PartialFile&) = delete;
    ~PartialFile(); // removes the file unless keep() was called

    // Writes the bytes and feeds them to the hash in the same pass.
    util::Expected<void> append(std::string_view data);
    // Empties the file and the hash for another attempt.
    util::Expected<void> restart();

    std::uint64_t size() const { return m_size; }
    const std::filesystem::path& path() const { return m_path; }

    // The hex digest of everything appended since the last restart, leaving the file open.
    std::string peek_digest() const { return m_hash.peek_hex(); }
    // Closes the file and returns the hex digest of everything appended since the last
    // restart; the file is still removed on destruction unless keep() follows.
    util::Expected<std::string> finish();
    // Hands the file over to the caller: it is no longer removed.
    std::filesystem::path keep();

private:
    PartialFile(util::Fd fd, std::filesystem::path path);

    util::Fd m_fd;
    std::filesystem::path m_path;
    util::Sha256 m_hash;
    std::uint64_t m_size = 0;
};

} // namespace shimkeeper::fetch
