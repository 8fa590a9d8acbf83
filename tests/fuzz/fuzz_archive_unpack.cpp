// Fuzzes the archive unpacker with any bytes as a downloaded artifact. It must refuse with an
// error, or leave a tree entirely inside the destination: only files, directories and symlinks
// that resolve inside it, no setuid/setgid/sticky bits, nothing group- or world-writable, and
// every path it reports present.
#include "shimkeeper/archive/unpack.hpp"

#include "fuzz_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

void check(bool ok, const char* what, const fs::path& where = {}) {
    fuzz_check(ok, "fuzz_archive_unpack", what, where.c_str());
}

// One folder per process, made once: the artifact file and a fresh destination per input.
// Removed when the process exits normally (libFuzzer's -runs and -max_total_time end in exit(),
// which runs this destructor); a crash leaves it for the reproduction.
struct WorkDir {
    fs::path path;
    WorkDir() {
        std::string pattern = (fs::temp_directory_path() / "sk-fuzz-archive-XXXXXX").string();
        check(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
        path = pattern;
    }
    ~WorkDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

const fs::path& work_dir() {
    static const WorkDir dir;
    return dir.path;
}

bool inside(const fs::path& root, const fs::path& path) {
    auto relative = path.lexically_normal().lexically_relative(root);
    return !relative.empty() && *relative.begin() != "..";
}

void check_tree(const fs::path& dest) {
    const fs::path root = fs::canonical(dest);
    for (const auto& entry : fs::recursive_directory_iterator(dest)) {
        struct stat info {};
        check(::lstat(entry.path().c_str(), &info) == 0, "lstat failed", entry.path());
        if (S_ISLNK(info.st_mode)) { // a symlink's own mode is always 0777 and means nothing
            fs::path target = fs::read_symlink(entry.path());
            check(target.is_relative(), "an absolute symlink", entry.path());
            check(inside(root, fs::weakly_canonical(entry.path())), "a symlink leaves the root",
                  entry.path());
        } else {
            check(S_ISREG(info.st_mode) || S_ISDIR(info.st_mode), "a special file", entry.path());
            check((info.st_mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWGRP | S_IWOTH)) == 0,
                  "unsafe mode bits", entry.path());
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fs::path artifact = work_dir() / "artifact";
    const fs::path dest = work_dir() / "dest";
    std::ofstream(artifact, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    fs::remove_all(dest);
    fs::create_directory(dest);
    shimkeeper::archive::UnpackLimits limits;
    limits.max_entries = 256;
    limits.max_entry_size = 1 << 20;
    limits.max_total_size = 4 << 20;
    auto unpacked = shimkeeper::archive::unpack(artifact, dest, "containerd-shim-fuzz-v2", limits);
    if (unpacked) {
        for (const auto& file : unpacked->files) {
            std::error_code ec;
            check(fs::symlink_status(dest / file.path, ec).type() != fs::file_type::not_found,
                  "a reported path is missing", file.path);
        }
        check_tree(dest);
    } else {
        check(!unpacked.error().message().empty(), "an error without a message");
    }
    fs::remove_all(dest);
    return 0;
}
