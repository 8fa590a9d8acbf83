#include "shimkeeper/archive/unpack.hpp"

#include "shimkeeper/archive/archive_reader.hpp"
#include "shimkeeper/archive/bare_artifact.hpp"
#include "shimkeeper/archive/budget.hpp"
#include "shimkeeper/archive/safe_tree.hpp"
#include "shimkeeper/util/fd.hpp"

#include <archive_entry.h>
#include <array>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace shimkeeper::archive {

namespace fs = std::filesystem;

namespace {

// libarchive reports "Unrecognized archive format" with ARCHIVE_ERRNO_FILE_FORMAT, which its
// public header leaves undefined; on Linux (no EFTYPE) libarchive defines it as EILSEQ.
constexpr int k_errno_not_an_archive = EILSEQ;

util::Expected<UnpackedFile> write_regular(const ArchiveReader& reader, struct archive_entry* entry,
                                           const std::string& path, SafeTree& tree,
                                           Budget& budget) {
    if (archive_entry_size_is_set(entry) != 0 && archive_entry_size(entry) >= 0 &&
        static_cast<std::uint64_t>(archive_entry_size(entry)) > budget.limits().max_entry_size) {
        return util::fail(
            util::ErrorCode::archive,
            "entry '" + path + "' declares " + std::to_string(archive_entry_size(entry)) +
                " bytes, more than the limit of " + std::to_string(budget.limits().max_entry_size));
    }
    util::Fd out = TRY(tree.create_file(path));
    std::array<char, k_block_size> buffer{};
    std::uint64_t size = 0;
    for (;;) {
        la_ssize_t n = archive_read_data(reader.get(), buffer.data(), buffer.size());
        if (n < 0) {
            return std::unexpected(reader.failure("cannot read entry '" + path + "'"));
        }
        if (n == 0) {
            break;
        }
        TRY(budget.account(size, static_cast<std::size_t>(n), path));
        TRY(write_all(out.get(), buffer.data(), static_cast<std::size_t>(n), path));
    }
    mode_t mode = archive_entry_perm(entry);
    TRY(finish_file(out.get(), mode, path));
    return UnpackedFile{path, size, (mode & 0111) != 0, EntryKind::file, {}};
}

const char* refused_type(mode_t type) {
    switch (type) {
    case AE_IFCHR:
        return "is a character device";
    case AE_IFBLK:
        return "is a block device";
    case AE_IFIFO:
        return "is a FIFO";
    case AE_IFSOCK:
        return "is a socket";
    default:
        return "has an unsupported file type";
    }
}

util::Expected<UnpackResult> unpack_entries(const ArchiveReader& reader, const fs::path& artifact,
                                            SafeTree& tree, Budget& budget) {
    UnpackResult result{{}, true};
    std::set<std::string> seen;
    std::uint64_t count = 0;
    for (;;) {
        struct archive_entry* entry = nullptr;
        int rc = archive_read_next_header(reader.get(), &entry);
        if (rc == ARCHIVE_EOF) {
            return result;
        }
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
            return std::unexpected(reader.failure("cannot read " + artifact.string() + " after " +
                                                  std::to_string(count) + " entries"));
        }
        if (++count > budget.limits().max_entries) {
            return util::fail(util::ErrorCode::archive,
                              artifact.string() + " has more than the limit of " +
                                  std::to_string(budget.limits().max_entries) + " entries");
        }
        const char* raw = archive_entry_pathname(entry);
        if (raw == nullptr) {
            raw = archive_entry_pathname_utf8(entry);
        }
        if (raw == nullptr) {
            return util::fail(util::ErrorCode::archive, "entry #" + std::to_string(count) + " of " +
                                                            artifact.string() +
                                                            " has a path libarchive cannot decode");
        }
        std::string path = TRY(checked_entry_path(raw));
        mode_t type = archive_entry_filetype(entry);
        if (const char* target = archive_entry_hardlink(entry); target != nullptr) {
            return util::fail(util::ErrorCode::archive, "entry '" + path + "' is a hard link to '" +
                                                            target + "'; hard links are refused");
        }
        if (path == ".") {
            if (type == AE_IFDIR) {
                continue; // "./": the root itself, which already exists
            }
            return util::fail(util::ErrorCode::archive, "entry '" + std::string(raw) +
                                                            "' names the archive root but is "
                                                            "not a directory");
        }
        if (!seen.insert(path).second) {
            return util::fail(util::ErrorCode::archive,
                              "entry '" + path + "' appears more than once in the archive");
        }
        if (type == AE_IFREG) {
            result.files.push_back(TRY(write_regular(reader, entry, path, tree, budget)));
        } else if (type == AE_IFDIR) {
            TRY(tree.make_directory(path, archive_entry_perm(entry)));
            result.files.push_back(UnpackedFile{path, 0, false, EntryKind::directory, {}});
        } else if (type == AE_IFLNK) {
            const char* target = archive_entry_symlink(entry);
            if (target == nullptr) {
                target = archive_entry_symlink_utf8(entry);
            }
            std::string link_target = target != nullptr ? target : "";
            if (std::string problem = symlink_target_problem(path, link_target); !problem.empty()) {
                return util::fail(util::ErrorCode::archive, "entry " + problem);
            }
            TRY(tree.make_symlink(path, link_target));
            result.files.push_back(UnpackedFile{path, 0, false, EntryKind::symlink, link_target});
        } else {
            return util::fail(util::ErrorCode::archive,
                              "entry '" + path + "' " + refused_type(type) +
                                  "; only files, directories and symlinks are allowed");
        }
    }
}

} // namespace

util::Expected<UnpackResult> unpack(const fs::path& artifact, const fs::path& dest,
                                    const std::string& bare_name, const UnpackLimits& limits) {
    SafeTree tree = TRY(SafeTree::open(dest));
    Budget budget(limits);
    // Not TRY: GCC 12 warns (-Wmaybe-uninitialized, a false positive) about a string moved out
    // of the statement expression.
    const util::Expected<std::string> magic_read = read_magic(artifact);
    if (!magic_read) {
        return std::unexpected(magic_read.error());
    }
    const std::string& magic = *magic_read;
    if (magic.empty()) {
        return util::fail(util::ErrorCode::archive,
                          "artifact " + artifact.string() + " is empty; check the URL");
    }
    if (magic.starts_with("\x7f"
                          "ELF") ||
        magic.starts_with("#!")) {
        return copy_bare_executable(artifact, tree, bare_name, budget);
    }
    ArchiveReader reader;
    if (reader.get() == nullptr) {
        return util::fail(util::ErrorCode::internal, "archive_read_new failed (out of memory)");
    }
    archive_read_support_filter_all(reader.get());
    archive_read_support_format_tar(reader.get());
    archive_read_support_format_zip(reader.get());
    if (TRY(reader.open_file(artifact)) != ARCHIVE_OK) {
        if (reader.gzip_failed() || archive_errno(reader.get()) != k_errno_not_an_archive) {
            return std::unexpected(reader.failure("cannot read " + artifact.string()));
        }
        if (auto filter = compression_filter_of(artifact)) {
            return util::fail(util::ErrorCode::archive,
                              artifact.string() + " is " + *filter +
                                  "-compressed but holds no tar or zip archive; publish a "
                                  "compressed tar, a zip or the bare executable");
        }
        return copy_bare_executable(artifact, tree, bare_name, budget);
    }
    auto result = unpack_entries(reader, artifact, tree, budget);
    if (result) {
        if (auto end = reader.read_gzip_to_end(limits.max_total_size); !end) {
            return std::unexpected(
                std::move(end.error()).with_context("cannot read " + artifact.string()));
        }
    }
    if (result && archive_read_close(reader.get()) != ARCHIVE_OK) {
        return std::unexpected(reader.failure("cannot read " + artifact.string()));
    }
    return result;
}

} // namespace shimkeeper::archive
