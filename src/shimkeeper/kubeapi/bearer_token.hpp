// The bearer token a request presents. A tokenFile is read again whenever the file changed
// (inode, size or mtime): projected ServiceAccount tokens are rotated in place by the kubelet, and
// an agent that keeps the first token gets 401s an hour later.
#pragma once

#include "shimkeeper/kubeapi/kubeconfig.hpp"
#include "shimkeeper/util/error.hpp"

#include <ctime>
#include <filesystem>
#include <string>

namespace shimkeeper::kubeapi {

class BearerToken {
public:
    explicit BearerToken(const KubeConfig& config)
        : m_token(config.token), m_file(config.token_file) {}

    // The token to send now; empty when the kubeconfig uses a client certificate only. A
    // tokenFile that is missing, unreadable or empty: ErrorCode::refused, naming the file.
    util::Expected<std::string> current();

private:
    std::string m_token;
    std::filesystem::path m_file;
    // What the file looked like when m_token was read from it.
    ino_t m_inode = 0;
    off_t m_size = -1;
    timespec m_mtime{};
};

} // namespace shimkeeper::kubeapi
