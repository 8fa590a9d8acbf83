#include "shimkeeper/kubeapi/bearer_token.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace shimkeeper::kubeapi {

util::Expected<std::string> BearerToken::current(Clock::time_point now) {
    if (m_file.empty()) {
        return m_token;
    }
    // A token that cannot be read is a credential refused before it is sent (ErrorCode::refused):
    // callers ride it out as they do a 401 (the last reading stands, the node's own files still
    // apply) and name the file to renew.
    struct stat info {};
    if (::stat(m_file.c_str(), &info) != 0) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::refused, "cannot read " + m_kind + " " + m_file.string(), errno));
    }
    bool same = info.st_ino == m_inode && info.st_size == m_size &&
                info.st_mtim.tv_sec == m_mtime.tv_sec && info.st_mtim.tv_nsec == m_mtime.tv_nsec;
    bool fresh = m_read_at && now - *m_read_at < k_reread_every;
    if (same && fresh && !m_token.empty()) {
        return m_token;
    }
    return read(info, now);
}

bool BearerToken::renew_after_refusal(const std::string& refused, Clock::time_point now) {
    if (m_file.empty()) {
        return false;
    }
    m_read_at.reset();
    auto token = current(now);
    return token && *token != refused;
}

// `info` is the file's stat taken just before: if the file is replaced between it and the read,
// the next current() sees another inode and reads again.
util::Expected<std::string> BearerToken::read(const struct stat& info, Clock::time_point now) {
    std::ifstream in(m_file);
    std::stringstream text;
    text << in.rdbuf();
    std::string token = text.str();
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
        token.pop_back();
    }
    if (!in || token.empty()) {
        return util::fail(util::ErrorCode::refused,
                          m_kind + " " + m_file.string() + (in ? " is empty" : " cannot be read"));
    }
    m_token = std::move(token);
    m_inode = info.st_ino;
    m_size = info.st_size;
    m_mtime = info.st_mtim;
    m_read_at = now;
    return m_token;
}

} // namespace shimkeeper::kubeapi
