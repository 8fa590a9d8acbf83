#include "shimkeeper/store/tamper.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <cerrno>
#include <cstdio>
#include <sys/stat.h>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

fs::path record_path(const Store& store, const std::string& digest) {
    return store.state_dir() / "fingerprints" / digest;
}

util::Expected<std::string> fingerprint(const fs::path& file) {
    struct stat info {};
    if (::lstat(file.c_str(), &info) != 0) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot stat " + file.string(), errno));
    }
    char text[192];
    std::snprintf(text, sizeof text, "%ju %jd %o %jd.%09ld %jd.%09ld\n",
                  static_cast<uintmax_t>(info.st_ino), static_cast<intmax_t>(info.st_size),
                  static_cast<unsigned>(info.st_mode), static_cast<intmax_t>(info.st_mtim.tv_sec),
                  info.st_mtim.tv_nsec, static_cast<intmax_t>(info.st_ctim.tv_sec),
                  info.st_ctim.tv_nsec);
    return std::string(text);
}

} // namespace

util::Expected<Integrity> check_binary_fingerprint(const Store& store, const std::string& digest,
                                                   const std::string& binary_path) {
    const auto now = fingerprint(store.artifact_dir(digest) / binary_path);
    if (!now) {
        // The binary itself is gone: that is a change too.
        return now.error().sys_errno() == ENOENT ? util::Expected<Integrity>(Integrity::changed)
                                                 : std::unexpected(now.error());
    }
    const fs::path record = record_path(store, digest);
    auto recorded = util::read_file(record);
    if (recorded) {
        return *recorded == *now ? Integrity::intact : Integrity::changed;
    }
    if (recorded.error().code() != util::ErrorCode::not_found) {
        return std::unexpected(recorded.error());
    }
    TRY(util::create_directories(record.parent_path()));
    TRY(util::write_file_atomic(record, *now, 0600));
    return Integrity::intact;
}

util::Expected<void> record_binary_fingerprint(const Store& store, const std::string& digest,
                                               const std::string& binary_path) {
    const auto now = TRY(fingerprint(store.artifact_dir(digest) / binary_path));
    const fs::path record = record_path(store, digest);
    TRY(util::create_directories(record.parent_path()));
    return util::write_file_atomic(record, now, 0600);
}

util::Expected<void> forget_stale_fingerprints(const Store& store) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(store.state_dir() / "fingerprints", ec)) {
        if (!store.has_artifact(entry.path().filename().string())) {
            TRY(util::remove_all(entry.path()));
        }
    }
    return {};
}

} // namespace shimkeeper::store
