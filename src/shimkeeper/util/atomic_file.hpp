// Writes a file so that readers see either the old content or the new, never a mix:
// a temp file in the target's directory, fsync, rename on commit(), fsync the directory.
// Destroying an uncommitted AtomicFile removes the temp file and leaves the target untouched.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/fd.hpp"

#include <filesystem>
#include <string_view>
#include <sys/types.h>

namespace shimkeeper::util {

class AtomicFile {
public:
    // mode applies to the new file; owner is copied from an existing target when we may.
    static Expected<AtomicFile> create(const std::filesystem::path& target, mode_t mode = 0644);

    AtomicFile(AtomicFile&&) noexcept = default;
    AtomicFile& operator=(AtomicFile&&) = delete;
    ~AtomicFile();

    Expected<void> write(std::string_view data);
    Expected<void> commit();

    const std::filesystem::path& temp_path() const { return m_temp; }

private:
    AtomicFile(std::filesystem::path target, std::filesystem::path temp, Fd fd)
        : m_target(std::move(target)), m_temp(std::move(temp)), m_fd(std::move(fd)) {}

    std::filesystem::path m_target;
    std::filesystem::path m_temp;
    Fd m_fd;
    bool m_committed = false;
};

// Convenience: the whole content in one go.
Expected<void> write_file_atomic(const std::filesystem::path& target, std::string_view data,
                                 mode_t mode = 0644);

// fsync a directory so that a rename inside it is durable.
Expected<void> fsync_directory(const std::filesystem::path& dir);

} // namespace shimkeeper::util
