#include "shimkeeper/fetch/partial_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

namespace shimkeeper::fetch {

namespace fs = std::filesystem;

util::Expected<PartialFile> PartialFile::create(const fs::path& dir) {
    std::string pattern = (dir / ".fetch-XXXXXX.part").string();
    int fd = ::mkostemps(pattern.data(), 5, O_CLOEXEC);
    if (fd < 0) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io,
                                    "cannot create a download file in " + dir.string() +
                                        " (is the store directory there and writable?)",
                                    errno));
    }
    return PartialFile(util::Fd(fd), fs::path(pattern));
}

PartialFile::PartialFile(util::Fd fd, fs::path path)
    : m_fd(std::move(fd)), m_path(std::move(path)) {}

PartialFile::PartialFile(PartialFile&& other) noexcept
    : m_fd(std::move(other.m_fd)), m_path(std::exchange(other.m_path, {})),
      m_hash(std::move(other.m_hash)), m_size(other.m_size) {}

PartialFile::~PartialFile() {
    if (!m_path.empty()) {
        ::unlink(m_path.c_str());
    }
}

util::Expected<void> PartialFile::append(std::string_view data) {
    m_hash.update(data);
    m_size += data.size();
    while (!data.empty()) {
        ssize_t n = ::write(m_fd.get(), data.data(), data.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot write " + m_path.string(), errno));
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return {};
}

util::Expected<void> PartialFile::restart() {
    if (::ftruncate(m_fd.get(), 0) != 0 || ::lseek(m_fd.get(), 0, SEEK_SET) != 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot empty " + m_path.string() + " for a retry", errno));
    }
    m_hash = util::Sha256();
    m_size = 0;
    return {};
}

util::Expected<std::string> PartialFile::finish() {
    int fd = m_fd.release();
    if (::close(fd) != 0) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot close " + m_path.string(), errno));
    }
    return m_hash.finish_hex();
}

fs::path PartialFile::keep() {
    return std::exchange(m_path, {});
}

} // namespace shimkeeper::fetch
