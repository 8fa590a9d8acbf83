// The bearer token a request presents. A tokenFile is read again whenever the file changed
// (inode, size or mtime), at least once a minute whatever its stat says (client-go's rule: a
// file rewritten within one mtime tick looks unchanged), and at once after the API server
// refused the token (401): projected ServiceAccount tokens are rotated in place by the kubelet,
// and a client that keeps the first token gets 401s once it expires or its account is replaced.
#pragma once

#include "shimkeeper/kubeapi/kubeconfig.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/stat.h>

namespace shimkeeper::kubeapi {

class BearerToken {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::seconds k_reread_every{60};

    explicit BearerToken(const KubeConfig& config)
        : m_token(config.token), m_file(config.token_file), m_kind(config.token_file_kind) {}

    // The token to send now; empty when the kubeconfig uses a client certificate only. A
    // tokenFile that is missing, unreadable or empty: ErrorCode::refused, naming the file.
    util::Expected<std::string> current(Clock::time_point now = Clock::now());

    // After a 401: the file is read again at once. True when it now holds another token than
    // the one that was refused (worth asking again); false without a tokenFile.
    bool renew_after_refusal(const std::string& refused, Clock::time_point now = Clock::now());

private:
    util::Expected<std::string> read(const struct stat& info, Clock::time_point now);

    std::string m_token;
    std::filesystem::path m_file;
    std::string m_kind;
    // What the file looked like when m_token was read from it, and when.
    ino_t m_inode = 0;
    off_t m_size = -1;
    timespec m_mtime{};
    std::optional<Clock::time_point> m_read_at;
};

} // namespace shimkeeper::kubeapi
