#include "shimkeeper/archive/bare_artifact.hpp"

#include "shimkeeper/archive/archive_handles.hpp"
#include "shimkeeper/util/fd.hpp"

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace shimkeeper::archive {

namespace fs = std::filesystem;

// First bytes of the artifact: ELF binaries and scripts skip libarchive's format detection.
util::Expected<std::string> read_magic(const fs::path& artifact) {
    util::Fd fd(::open(artifact.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot open artifact " + artifact.string(), errno));
    }
    std::array<char, 4> head{};
    ssize_t n = ::read(fd.get(), head.data(), head.size());
    if (n < 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot read artifact " + artifact.string(), errno));
    }
    return std::string(head.data(), static_cast<std::size_t>(n));
}

// True when libarchive finds a compression filter (gzip, xz, ...) around data that is not a
// tar or zip archive: such a file is neither an archive we accept nor a runnable binary.
std::optional<std::string> compression_filter_of(const fs::path& artifact) {
    ArchiveReadPtr probe(archive_read_new());
    archive_read_support_filter_all(probe.get());
    archive_read_support_format_raw(probe.get());
    if (archive_read_open_filename(probe.get(), artifact.c_str(), k_block_size) != ARCHIVE_OK) {
        return std::nullopt;
    }
    if (archive_filter_count(probe.get()) > 1) {
        return std::string(archive_filter_name(probe.get(), 0));
    }
    return std::nullopt;
}

util::Expected<UnpackResult> copy_bare_executable(const fs::path& artifact, SafeTree& tree,
                                                  const std::string& bare_name, Budget& budget) {
    std::string name = TRY(checked_entry_path(bare_name));
    if (name == "." || name.find('/') != std::string::npos) {
        return util::fail(util::ErrorCode::invalid_input,
                          "binary name '" + bare_name + "' must be a plain file name");
    }
    util::Fd in(::open(artifact.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot open artifact " + artifact.string(), errno));
    }
    util::Fd out = TRY(tree.create_file(name));
    std::array<char, k_block_size> buffer{};
    std::uint64_t size = 0;
    for (;;) {
        ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot read artifact " + artifact.string(), errno));
        }
        if (n == 0) {
            break;
        }
        TRY(budget.account(size, static_cast<std::size_t>(n), name));
        TRY(write_all(out.get(), buffer.data(), static_cast<std::size_t>(n), name));
    }
    TRY(finish_file(out.get(), 0755, name));
    return UnpackResult{{UnpackedFile{name, size, true, EntryKind::file, {}}}, false};
}

} // namespace shimkeeper::archive
