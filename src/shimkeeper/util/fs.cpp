#include "shimkeeper/util/fs.hpp"

#include "shimkeeper/util/fd.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace shimkeeper::util {

namespace fs = std::filesystem;

Expected<std::string> read_file(const fs::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(
            Error::from_errno(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                              "cannot read " + path.string(), errno));
    }
    std::string content;
    char buffer[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return std::unexpected(
                Error::from_errno(ErrorCode::io, "cannot read " + path.string(), errno));
        }
        if (n == 0) {
            return content;
        }
        content.append(buffer, static_cast<size_t>(n));
    }
}

Expected<void> create_directories(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return std::unexpected(Error::from_errno(
            ErrorCode::io, "cannot create directory " + dir.string(), ec.value()));
    }
    return {};
}

Expected<void> remove_all(const fs::path& path) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) {
        return std::unexpected(
            Error::from_errno(ErrorCode::io, "cannot remove " + path.string(), ec.value()));
    }
    return {};
}

Expected<fs::path> make_temp_dir(const fs::path& parent, const std::string& prefix) {
    std::string pattern = (parent / (prefix + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        return std::unexpected(Error::from_errno(
            ErrorCode::io, "cannot create a temp directory in " + parent.string(), errno));
    }
    return fs::path(pattern);
}

} // namespace shimkeeper::util
