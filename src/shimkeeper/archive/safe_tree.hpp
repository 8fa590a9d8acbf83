// Creates files, directories and symlinks below one root directory without ever following a
// symlink: every parent component is opened with O_NOFOLLOW relative to the root's fd, and every
// new name is created exclusively (O_EXCL, mkdirat, symlinkat), so an entry can neither replace
// an earlier one nor be written through a symlink an earlier entry planted.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/fd.hpp"

#include <filesystem>
#include <string>
#include <sys/types.h>

namespace shimkeeper::archive {

class SafeTree {
public:
    // `root` must be an existing directory (not a symlink).
    static util::Expected<SafeTree> open(const std::filesystem::path& root);

    // Paths below are normalised relative paths (checked_entry_path). Missing parents are
    // created with mode 0755.
    util::Expected<void> make_directory(const std::string& path, mode_t mode);
    // An open, write-only fd of a new file (mode 0600 until finish_file).
    util::Expected<util::Fd> create_file(const std::string& path);
    util::Expected<void> make_symlink(const std::string& path, const std::string& target);

    const std::filesystem::path& root() const { return m_root; }

private:
    SafeTree(std::filesystem::path root, util::Fd fd)
        : m_root(std::move(root)), m_fd(std::move(fd)) {}

    // The fd of the directory that will hold `path`, plus the last component's name.
    util::Expected<util::Fd> open_parent(const std::string& path, std::string& leaf);

    std::filesystem::path m_root;
    util::Fd m_fd;
};

// Sets the final mode of a file made by create_file. Only mode & 0755 is kept:
// no setuid, setgid or sticky bit, no group or world write (directories get the same mask).
util::Expected<void> finish_file(int fd, mode_t mode, const std::string& path);

// Writes all of `data` to `fd`; `what` names the file in errors.
util::Expected<void> write_all(int fd, const char* data, std::size_t size, const std::string& what);

} // namespace shimkeeper::archive
