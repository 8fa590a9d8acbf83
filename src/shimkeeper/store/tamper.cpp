#include "shimkeeper/store/tamper.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <cerrno>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <sys/stat.h>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

fs::path record_path(const Store& store, const std::string& digest) {
    return store.state_dir() / "fingerprints" / digest;
}

// "<ino> <size> <mode> <mtime> <ctime>" of the file as it is now.
util::Expected<std::string> fingerprint(const fs::path& file) {
    struct stat info {};
    if (::lstat(file.c_str(), &info) != 0) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot stat " + file.string(), errno));
    }
    char text[192];
    std::snprintf(text, sizeof text, "%ju %jd %o %jd.%09ld %jd.%09ld",
                  static_cast<uintmax_t>(info.st_ino), static_cast<intmax_t>(info.st_size),
                  static_cast<unsigned>(info.st_mode), static_cast<intmax_t>(info.st_mtim.tv_sec),
                  info.st_mtim.tv_nsec, static_cast<intmax_t>(info.st_ctim.tv_sec),
                  info.st_ctim.tv_nsec);
    return std::string(text);
}

// A record holds one line per binary of the artifact that a shim uses: its fingerprint, a space,
// its path in the artifact (two shims may take two binaries out of one archive). A line of
// fingerprint alone was written before paths were recorded; it stands for any binary that has
// no line of its own, as it did then.
struct Record {
    std::map<std::string, std::string> by_path; // binary path -> fingerprint
    std::optional<std::string> unnamed;         // the older one-line form
};

Record parse_record(const std::string& text) {
    Record record;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        // Five space-separated fields, then the path (which may itself hold spaces).
        std::size_t end = 0;
        for (int field = 0; field < 5 && end != std::string::npos; ++field) {
            end = line.find(' ', end == 0 ? 0 : end + 1);
        }
        if (end == std::string::npos) {
            record.unnamed = line;
        } else {
            record.by_path[line.substr(end + 1)] = line.substr(0, end);
        }
    }
    return record;
}

util::Expected<void> save_record(const fs::path& file, const Record& record) {
    std::string text;
    for (const auto& [path, print] : record.by_path) {
        text += print + " " + path + "\n";
    }
    TRY(util::create_directories(file.parent_path()));
    return util::write_file_atomic(file, text, 0600);
}

util::Expected<Record> load_record(const fs::path& file) {
    auto text = util::read_file(file);
    if (text) {
        return parse_record(*text);
    }
    if (text.error().code() == util::ErrorCode::not_found) {
        return Record{};
    }
    return std::unexpected(text.error());
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
    const fs::path file = record_path(store, digest);
    auto record = TRY(load_record(file));
    if (auto found = record.by_path.find(binary_path); found != record.by_path.end()) {
        return found->second == *now ? Integrity::intact : Integrity::changed;
    }
    if (record.unnamed) {
        return *record.unnamed == *now ? Integrity::intact : Integrity::changed;
    }
    // First use of this binary: recorded as it is now.
    record.by_path[binary_path] = *now;
    TRY(save_record(file, record));
    return Integrity::intact;
}

util::Expected<void> record_binary_fingerprint(const Store& store, const std::string& digest,
                                               const std::string& binary_path) {
    const auto now = TRY(fingerprint(store.artifact_dir(digest) / binary_path));
    const fs::path file = record_path(store, digest);
    auto record = TRY(load_record(file));
    // After a commit every other binary of the artifact is new too: their lines are dropped
    // and recorded again at their next use.
    record.by_path = {{binary_path, now}};
    return save_record(file, record);
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
