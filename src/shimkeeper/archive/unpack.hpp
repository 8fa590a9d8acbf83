// Safe unpacking of a downloaded shim artifact: tar (plain, gzip, xz, zstd, bzip2) or zip, or a
// bare executable. libarchive only reads; every byte reaches the disk through SafeTree, so the
// safety rules are ours: no absolute paths, no "..", no symlink leaving the root, no hard links,
// devices, FIFOs or sockets, no duplicates, no setuid/setgid/sticky bits or group/world write
// (modes are masked with 0755), and hard caps on the
// entry count, each entry's size and the total, counted on the bytes actually decompressed.
#pragma once

#include "shimkeeper/archive/entry_path.hpp"
#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace shimkeeper::archive {

struct UnpackLimits {
    std::uint64_t max_entries = 10'000;
    std::uint64_t max_entry_size = 1ull << 30;
    std::uint64_t max_total_size = 2ull << 30;
};

enum class EntryKind { file, directory, symlink };

struct UnpackedFile {
    std::string path; // normalised, relative to dest
    std::uint64_t size = 0;
    bool executable = false;
    EntryKind kind = EntryKind::file;
    std::string link_target; // symlinks only
};

struct UnpackResult {
    std::vector<UnpackedFile> files; // in archive order; directories and symlinks included
    bool was_archive = false;
};

// Unpacks `artifact` into the EXISTING empty directory `dest`. Anything libarchive does not
// recognise as a tar or zip archive (and that is not compressed) is treated as a bare executable
// and copied to dest/<bare_name> with mode 0755. Nothing is fsynced here: one syncfs in
// store::Store::commit_artifact makes the whole tree durable before it enters the store.
// On failure `dest` is left partly filled: the caller unpacks into a staging directory under
// tmp/, removes it on error, and commits only complete ones (store::Store::commit_artifact).
util::Expected<UnpackResult> unpack(const std::filesystem::path& artifact,
                                    const std::filesystem::path& dest, const std::string& bare_name,
                                    const UnpackLimits& limits = {});

} // namespace shimkeeper::archive
