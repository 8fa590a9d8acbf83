#include "shimkeeper/store/store.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fd.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

// A shim artifact is a handful of files: fsync each (and each folder). Past k_fsync_limit
// entries one syncfs of the filesystem is cheaper (10,000 fsyncs took 40 s on a busy disk),
// while for a few files it would flush every other writer's data too (~30-50 ms here).
constexpr std::size_t k_fsync_limit = 256;

util::Expected<void> flush_tree(const fs::path& root) {
    std::vector<fs::path> entries{root};
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator() && entries.size() <= k_fsync_limit;
         it.increment(ec)) {
        const auto status = it->symlink_status(ec); // links are not flushed, nor followed
        if (fs::is_regular_file(status) || fs::is_directory(status)) {
            entries.push_back(it->path());
        }
    }
    const bool whole_filesystem = ec || entries.size() > k_fsync_limit;
    if (whole_filesystem) {
        entries.resize(1);
    }
    for (const fs::path& entry : entries) {
        util::Fd fd(::open(entry.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        const int rc = !fd ? -1 : whole_filesystem ? ::syncfs(fd.get()) : ::fsync(fd.get());
        if (rc != 0) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot flush " + entry.string() + " to disk", errno));
        }
    }
    return {};
}

// Makes a staging folder ready to enter the store: mkdtemp made it 0700, a stored artifact is
// readable like /usr/bin; and every byte of the tree is durable before a rename publishes it.
util::Expected<void> seal_staging(const fs::path& staging) {
    if (::chmod(staging.c_str(), 0755) != 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot set the mode of " + staging.string(), errno));
    }
    return flush_tree(staging);
}

bool is_digest(const std::string& digest) {
    return util::is_sha256_hex(digest) &&
           std::ranges::none_of(digest, [](char c) { return c >= 'A' && c <= 'F'; });
}

util::Expected<void> check_digest(const std::string& digest) {
    if (!is_digest(digest)) {
        return util::fail(util::ErrorCode::invalid_input,
                          "'" + digest + "' is not a lowercase sha256 digest (64 hex digits)");
    }
    return {};
}

std::string random_suffix() {
    std::random_device device;
    return std::to_string(::getpid()) + "-" + std::to_string(device());
}

} // namespace

Store::Store(util::HostRoot root, fs::path node_dir)
    : m_root(std::move(root)), m_node_dir(std::move(node_dir)) {}

fs::path Store::artifacts_root() const {
    return host_dir() / "store" / "sha256";
}
fs::path Store::artifact_dir(const std::string& digest) const {
    return artifacts_root() / digest;
}
fs::path Store::tmp_dir() const {
    return host_dir() / "tmp";
}
fs::path Store::bin_dir() const {
    return host_dir() / "bin";
}
fs::path Store::state_dir() const {
    return host_dir() / "state";
}
fs::path Store::state_file() const {
    return state_dir() / "state.json";
}

bool Store::has_artifact(const std::string& digest) const {
    struct stat info {};
    return is_digest(digest) && ::lstat(artifact_dir(digest).c_str(), &info) == 0 &&
           S_ISDIR(info.st_mode);
}

std::vector<std::string> Store::artifact_digests() const {
    std::vector<std::string> digests;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(artifacts_root(), ec)) {
        std::string name = entry.path().filename().string();
        if (is_digest(name) && entry.is_directory(ec) && !entry.is_symlink(ec)) {
            digests.push_back(name);
        }
    }
    std::ranges::sort(digests);
    return digests;
}

util::Expected<archive::UnpackResult> Store::artifact_listing(const std::string& digest) const {
    TRY(check_digest(digest));
    const fs::path dir = artifact_dir(digest);
    archive::UnpackResult listing{{}, true};
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        archive::UnpackedFile file;
        file.path = it->path().lexically_relative(dir).string();
        fs::file_status status = it->symlink_status(ec);
        if (fs::is_symlink(status)) {
            file.kind = archive::EntryKind::symlink;
            file.link_target = fs::read_symlink(it->path(), ec).string();
        } else if (fs::is_directory(status)) {
            file.kind = archive::EntryKind::directory;
        } else {
            file.size = it->file_size(ec);
            file.executable = (status.permissions() & fs::perms::owner_exec) != fs::perms::none;
        }
        listing.files.push_back(std::move(file));
    }
    if (ec) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot list stored artifact " + dir.string(), ec.value()));
    }
    std::ranges::sort(listing.files, {}, &archive::UnpackedFile::path);
    return listing;
}

util::Expected<void> Store::ensure_layout() const {
    for (const fs::path& dir : {artifacts_root(), bin_dir(), tmp_dir(), state_dir()}) {
        TRY(util::create_directories(dir));
    }
    return {};
}

util::Expected<void> Store::commit_artifact(const fs::path& staging,
                                            const std::string& digest) const {
    TRY(check_digest(digest));
    TRY(util::create_directories(artifacts_root()));
    TRY(seal_staging(staging));
    fs::path final_dir = artifact_dir(digest);
    // RENAME_NOREPLACE: a plain rename would silently replace an empty directory of that name.
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_NOREPLACE) !=
        0) {
        if (errno == EEXIST || errno == ENOTEMPTY) {
            // Another run committed the same content first; ours is a duplicate.
            return util::remove_all(staging);
        }
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io,
            "cannot move " + staging.string() + " into the store as " + final_dir.string() +
                " (staging must be on the store's filesystem, under " + tmp_dir().string() + ")",
            errno));
    }
    return util::fsync_directory(artifacts_root());
}

util::Expected<void> Store::replace_artifact(const fs::path& staging,
                                             const std::string& digest) const {
    TRY(check_digest(digest));
    if (!has_artifact(digest)) {
        return commit_artifact(staging, digest);
    }
    TRY(seal_staging(staging));
    const fs::path final_dir = artifact_dir(digest);
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) != 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io,
            "cannot exchange " + final_dir.string() + " with its fresh copy " + staging.string(),
            errno));
    }
    TRY(util::fsync_directory(artifacts_root()));
    return util::remove_all(staging); // now the changed copy; a crash leaves it under tmp/
}

util::Expected<void> Store::check_binary_name(const std::string& binary) const {
    if (binary.empty() || binary == "." || binary == ".." ||
        binary.find('/') != std::string::npos || binary.front() == '.') {
        return util::fail(util::ErrorCode::invalid_input,
                          "binary name '" + binary + "' must be a plain file name");
    }
    return {};
}

fs::path Store::binary_target_node_path(const std::string& digest,
                                        const std::string& binary_path) const {
    return m_node_dir / "store" / "sha256" / digest / binary_path;
}

fs::path Store::binary_node_path(const std::string& binary) const {
    return m_node_dir / "bin" / binary;
}

util::Expected<void> Store::link_binary(const std::string& binary, const std::string& digest,
                                        const std::string& binary_path) const {
    TRY(check_binary_name(binary));
    TRY(check_digest(digest));
    fs::path host_target = artifact_dir(digest) / binary_path;
    struct stat info {};
    if (::lstat(host_target.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
        return util::fail(util::ErrorCode::not_found,
                          "cannot link " + binary + ": " + host_target.string() +
                              " is not a file in the store; fetch the shim again");
    }
    return link_to(binary, binary_target_node_path(digest, binary_path).string());
}

util::Expected<void> Store::link_to(const std::string& binary, const std::string& target) const {
    TRY(check_binary_name(binary));
    TRY(util::create_directories(bin_dir()));
    fs::path link = bin_dir() / binary;
    fs::path temp = bin_dir() / ("." + binary + ".tmp-" + random_suffix());
    if (::symlink(target.c_str(), temp.c_str()) != 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot create symlink " + temp.string(), errno));
    }
    if (::rename(temp.c_str(), link.c_str()) != 0) {
        int err = errno;
        ::unlink(temp.c_str());
        return std::unexpected(util::Error::from_errno(
            err == EISDIR ? util::ErrorCode::conflict : util::ErrorCode::io,
            "cannot replace " + link.string() + " with a link to " + target, err));
    }
    return util::fsync_directory(bin_dir());
}

util::Expected<void> Store::unlink_binary(const std::string& binary) const {
    TRY(check_binary_name(binary));
    fs::path link = bin_dir() / binary;
    struct stat info {};
    if (::lstat(link.c_str(), &info) != 0) {
        if (errno == ENOENT) {
            return {};
        }
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot inspect " + link.string(), errno));
    }
    if (!S_ISLNK(info.st_mode)) {
        return util::fail(util::ErrorCode::conflict,
                          link.string() + " is not a symlink shimkeeper made; remove it by hand " +
                              "if it is not needed");
    }
    if (::unlink(link.c_str()) != 0 && errno != ENOENT) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot remove " + link.string(), errno));
    }
    return util::fsync_directory(bin_dir());
}

std::optional<std::string> Store::binary_link_target(const std::string& binary) const {
    if (!check_binary_name(binary)) {
        return std::nullopt;
    }
    std::error_code ec;
    fs::path target = fs::read_symlink(bin_dir() / binary, ec);
    if (ec) {
        return std::nullopt;
    }
    return target.string();
}

util::Expected<StoreState> Store::load_state() const {
    return store::load_state(state_file());
}

util::Expected<void> Store::save_state(const StoreState& state) const {
    TRY(util::create_directories(state_dir()));
    return store::save_state(state_file(), state);
}

} // namespace shimkeeper::store
