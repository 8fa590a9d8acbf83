#include "shimkeeper/archive/safe_tree.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shimkeeper::archive {

namespace {

// The permission bits an unpacked entry may keep. Never setuid, setgid or sticky; and never
// group- or world-writable, because containerd runs the shim as root and a writable binary or
// directory in the store would let any local user swap the code it runs.
constexpr mode_t k_kept_mode_bits = 0755;

util::Error entry_errno(const std::string& path, const std::string& what, int err) {
    return util::Error::from_errno(util::ErrorCode::archive, "entry '" + path + "': " + what, err);
}

} // namespace

util::Expected<SafeTree> SafeTree::open(const std::filesystem::path& root) {
    util::Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot open unpack directory " + root.string(), errno));
    }
    return SafeTree(root, std::move(fd));
}

util::Expected<util::Fd> SafeTree::open_parent(const std::string& path, std::string& leaf) {
    util::Fd current(::dup(m_fd.get()));
    if (!current) {
        return std::unexpected(util::Error::from_errno(util::ErrorCode::io, "dup", errno));
    }
    std::size_t start = 0;
    for (;;) {
        std::size_t slash = path.find('/', start);
        if (slash == std::string::npos) {
            leaf = path.substr(start);
            return current;
        }
        std::string component = path.substr(start, slash - start);
        std::string so_far = path.substr(0, slash);
        int next = ::openat(current.get(), component.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT) {
            if (::mkdirat(current.get(), component.c_str(), 0755) != 0 && errno != EEXIST) {
                return std::unexpected(
                    entry_errno(path, "cannot create directory '" + so_far + "'", errno));
            }
            next = ::openat(current.get(), component.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            if (errno == ELOOP || errno == ENOTDIR) {
                return util::fail(util::ErrorCode::archive,
                                  "entry '" + path + "' would be written through '" + so_far +
                                      "', which is a symlink or a file of the same archive");
            }
            return std::unexpected(entry_errno(path, "cannot open '" + so_far + "'", errno));
        }
        current.reset(next);
        start = slash + 1;
    }
}

util::Expected<void> SafeTree::make_directory(const std::string& path, mode_t mode) {
    std::string leaf;
    util::Fd parent = TRY(open_parent(path, leaf));
    // The owner keeps rwx so that later entries fit in and garbage collection can remove it.
    mode_t wanted = (mode & k_kept_mode_bits) | 0700;
    if (::mkdirat(parent.get(), leaf.c_str(), wanted) != 0) {
        if (errno != EEXIST) {
            return std::unexpected(entry_errno(path, "cannot create directory", errno));
        }
        // Created implicitly as the parent of an earlier entry: fine, if it is a real directory.
        struct stat existing {};
        if (::fstatat(parent.get(), leaf.c_str(), &existing, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(existing.st_mode)) {
            return util::fail(util::ErrorCode::archive,
                              "entry '" + path + "' is a directory, but an earlier entry " +
                                  "already created that path as a file or symlink");
        }
    }
    util::Fd dir(
        ::openat(parent.get(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir || ::fchmod(dir.get(), wanted) != 0) {
        return std::unexpected(entry_errno(path, "cannot set the directory's mode", errno));
    }
    return {};
}

util::Expected<util::Fd> SafeTree::create_file(const std::string& path) {
    std::string leaf;
    util::Fd parent = TRY(open_parent(path, leaf));
    util::Fd fd(::openat(parent.get(), leaf.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) {
        if (errno == EEXIST) {
            return util::fail(util::ErrorCode::archive,
                              "entry '" + path + "' already exists (duplicate entry or a " +
                                  "directory implied by an earlier entry)");
        }
        return std::unexpected(entry_errno(path, "cannot create file", errno));
    }
    return fd;
}

util::Expected<void> SafeTree::make_symlink(const std::string& path, const std::string& target) {
    std::string leaf;
    util::Fd parent = TRY(open_parent(path, leaf));
    if (::symlinkat(target.c_str(), parent.get(), leaf.c_str()) != 0) {
        if (errno == EEXIST) {
            return util::fail(util::ErrorCode::archive,
                              "entry '" + path + "' already exists (duplicate entry)");
        }
        return std::unexpected(entry_errno(path, "cannot create symlink", errno));
    }
    return {};
}

util::Expected<void> finish_file(int fd, mode_t mode, const std::string& path) {
    if (::fchmod(fd, mode & k_kept_mode_bits) != 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot finish unpacked file '" + path + "'", errno));
    }
    return {};
}

util::Expected<void> write_all(int fd, const char* data, std::size_t size,
                               const std::string& what) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return std::unexpected(
                util::Error::from_errno(util::ErrorCode::io, "cannot write " + what, errno));
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return {};
}

} // namespace shimkeeper::archive
