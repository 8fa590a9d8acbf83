#include "shimkeeper/util/atomic_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shimkeeper::util {

Expected<AtomicFile> AtomicFile::create(const std::filesystem::path& target, mode_t mode) {
    std::string pattern = (target.parent_path() / ("." + target.filename().string() + ".XXXXXX"));
    int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0) {
        return std::unexpected(Error::from_errno(
            ErrorCode::io, "cannot create a temp file beside " + target.string(), errno));
    }
    Fd owned(fd);
    struct stat existing {};
    if (::stat(target.c_str(), &existing) == 0) {
        // Keep the mode and, where we are allowed to, the owner of the file we replace.
        mode = existing.st_mode & 07777;
        if (::fchown(fd, existing.st_uid, existing.st_gid) != 0 && errno != EPERM) {
            ::unlink(pattern.c_str());
            return std::unexpected(
                Error::from_errno(ErrorCode::io, "cannot set owner of " + pattern, errno));
        }
    }
    if (::fchmod(fd, mode) != 0) {
        ::unlink(pattern.c_str());
        return std::unexpected(Error::from_errno(ErrorCode::io, "cannot chmod " + pattern, errno));
    }
    return AtomicFile(target, pattern, std::move(owned));
}

AtomicFile::~AtomicFile() {
    if (!m_committed && !m_temp.empty()) {
        ::unlink(m_temp.c_str());
    }
}

Expected<void> AtomicFile::write(std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(m_fd.get(), data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return std::unexpected(
                Error::from_errno(ErrorCode::io, "cannot write " + m_temp.string(), errno));
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return {};
}

Expected<void> AtomicFile::commit() {
    if (::fsync(m_fd.get()) != 0) {
        return std::unexpected(
            Error::from_errno(ErrorCode::io, "cannot fsync " + m_temp.string(), errno));
    }
    m_fd.reset();
    if (::rename(m_temp.c_str(), m_target.c_str()) != 0) {
        return std::unexpected(Error::from_errno(
            ErrorCode::io, "cannot rename " + m_temp.string() + " to " + m_target.string(), errno));
    }
    m_committed = true;
    return fsync_directory(m_target.parent_path());
}

Expected<void> write_file_atomic(const std::filesystem::path& target, std::string_view data,
                                 mode_t mode) {
    auto file = TRY(AtomicFile::create(target, mode));
    TRY(file.write(data));
    return file.commit();
}

Expected<void> fsync_directory(const std::filesystem::path& dir) {
    Fd fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(
            Error::from_errno(ErrorCode::io, "cannot open directory " + dir.string(), errno));
    }
    if (::fsync(fd.get()) != 0) {
        return std::unexpected(
            Error::from_errno(ErrorCode::io, "cannot fsync directory " + dir.string(), errno));
    }
    return {};
}

} // namespace shimkeeper::util
