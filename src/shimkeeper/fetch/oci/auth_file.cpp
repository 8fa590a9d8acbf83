#include "shimkeeper/fetch/oci/auth_file.hpp"

#include "shimkeeper/util/base64.hpp"
#include "shimkeeper/util/fs.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::fetch::oci {

namespace {

// "https://host/v1/" -> "host"; "host/ns/" -> "host/ns".
std::string normalise_key(std::string key) {
    for (std::string_view scheme : {"https://", "http://"}) {
        if (key.starts_with(scheme)) {
            key.erase(0, scheme.size());
            if (auto slash = key.find('/'); slash != std::string::npos) {
                key.resize(slash); // a URL-shaped key names a host, never a repository
            }
        }
    }
    while (key.ends_with('/')) {
        key.pop_back();
    }
    return key;
}

util::Error broken(const std::filesystem::path& file, const std::string& why) {
    return util::Error(util::ErrorCode::invalid_input,
                       "registry auth file " + file.string() + ": " + why +
                           "; it must look like {\"auths\": {\"HOST\": {\"auth\": "
                           "\"<base64 of user:password>\"}}}");
}

util::Expected<std::optional<Credentials>> search_file(const std::filesystem::path& file,
                                                       const std::vector<std::string>& keys) {
    auto text = util::read_file(file);
    if (!text) {
        if (text.error().code() == util::ErrorCode::not_found) {
            return std::nullopt;
        }
        return std::unexpected(std::move(text).error());
    }
    auto document = nlohmann::json::parse(*text, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        return std::unexpected(broken(file, "not a JSON object"));
    }
    auto auths = document.find("auths");
    if (auths == document.end()) {
        return std::nullopt;
    }
    if (!auths->is_object()) {
        return std::unexpected(broken(file, "\"auths\" is not an object"));
    }
    for (const std::string& wanted : keys) {
        for (const auto& [key, entry] : auths->items()) {
            if (normalise_key(key) != wanted) {
                continue;
            }
            auto auth = entry.is_object() ? entry.find("auth") : entry.end();
            if (auth == entry.end() || !auth->is_string()) {
                return std::unexpected(
                    broken(file, "auths.\"" + key + "\" has no \"auth\" string"));
            }
            auto decoded = util::decode_base64(auth->get<std::string>());
            if (!decoded || decoded->find(':') == std::string::npos) {
                return std::unexpected(
                    broken(file, "auths.\"" + key + "\".auth is not base64 of user:password"));
            }
            return Credentials{auth->get<std::string>(), file};
        }
    }
    return std::nullopt;
}

} // namespace

std::vector<std::filesystem::path> default_auth_files() {
    return {"/run/containers/0/auth.json", "/etc/containers/auth.json",
            "/root/.docker/config.json"};
}

util::Expected<std::optional<Credentials>>
find_credentials(const std::vector<std::filesystem::path>& files, const std::string& registry,
                 const std::string& repository) {
    // Most specific first: host/a/b/repo, host/a/b, host/a, host.
    std::vector<std::string> keys;
    std::string key = registry + "/" + repository;
    while (true) {
        keys.push_back(key);
        auto slash = key.rfind('/');
        if (slash == std::string::npos || slash < registry.size()) {
            break;
        }
        key.resize(slash);
    }
    for (const auto& file : files) {
        if (auto found = TRY(search_file(file, keys))) {
            return found;
        }
    }
    return std::nullopt;
}

} // namespace shimkeeper::fetch::oci
