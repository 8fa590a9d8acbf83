// Registry credentials from a containers-auth.json(5) / docker config.json file:
// `{"auths": {"<host>[/<path>]": {"auth": "<base64 of user:password>"}}}`. The most specific
// key wins (host/namespace/repo before host/namespace before host); Docker's URL-shaped keys
// ("https://host/v1/") count as the host.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::fetch::oci {

struct Credentials {
    std::string basic;            // the base64 "user:password", as sent after "Basic "
    std::filesystem::path source; // the file it came from
};

// The files looked at when no auth_file is configured, in order: podman's and skopeo's for root
// (/run/containers/0/auth.json), /etc/containers/auth.json, then Docker's
// (/root/.docker/config.json).
std::vector<std::filesystem::path> default_auth_files();

// Looks through `files` in order (missing files are skipped; a broken one is an error naming
// it) for `registry` and `repository`.
util::Expected<std::optional<Credentials>>
find_credentials(const std::vector<std::filesystem::path>& files, const std::string& registry,
                 const std::string& repository);

} // namespace shimkeeper::fetch::oci
