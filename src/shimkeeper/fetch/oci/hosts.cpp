#include "shimkeeper/fetch/oci/hosts.hpp"

#include <algorithm>
#include <toml++/toml.h>

namespace shimkeeper::fetch::oci {

namespace {

util::Error bad(const std::filesystem::path& file, const std::string& why) {
    return util::Error(util::ErrorCode::invalid_input,
                       file.string() + ": " + why + " (containerd's registry host configuration)");
}

// Where a registry itself serves the API: Docker Hub's name is not its API host (containerd
// maps it the same way).
std::string default_server(const std::string& registry) {
    return "https://" + (registry == "docker.io" ? std::string("registry-1.docker.io") : registry);
}

// "mirror:5000" -> "https://mirror:5000"; a URL keeps its scheme.
std::string with_scheme(const std::string& host) {
    return host.find("://") == std::string::npos ? "https://" + host : host;
}

util::Expected<std::string> api_root_of(const std::string& url, bool override_path,
                                        const std::filesystem::path& file) {
    if (!url.starts_with("http://") && !url.starts_with("https://")) {
        return std::unexpected(bad(file, "'" + url + "' is not an http(s) URL"));
    }
    auto path_start = url.find('/', url.find("://") + 3);
    std::string origin = url.substr(0, path_start);
    std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
    while (path.ends_with('/')) {
        path.pop_back();
    }
    return origin + (override_path ? path : path + "/v2");
}

util::Expected<RegistryHost> parse_host(const std::string& url, const toml::table& table,
                                        const std::filesystem::path& file) {
    RegistryHost host;
    host.is_mirror = true;
    host.api_root =
        TRY(api_root_of(with_scheme(url), table["override_path"].value_or(false), file));
    if (const toml::array* caps = table["capabilities"].as_array()) {
        host.resolve = false;
        host.pull = false;
        for (const auto& cap : *caps) {
            std::string name = cap.value_or(std::string());
            host.resolve = host.resolve || name == "resolve";
            host.pull = host.pull || name == "pull";
        }
    }
    std::optional<std::string> ca = table["ca"].value<std::string>();
    if (const toml::array* cas = table["ca"].as_array(); cas != nullptr && !cas->empty()) {
        ca = (*cas)[0].value<std::string>();
    }
    if (ca) {
        std::filesystem::path path(*ca);
        host.ca_file = path.is_absolute() ? path.string() : (file.parent_path() / path).string();
    }
    return host;
}

util::Expected<std::vector<RegistryHost>> read_hosts_file(const std::filesystem::path& file,
                                                          const std::string& registry) {
    toml::table root;
    try {
        root = toml::parse_file(file.string());
    } catch (const toml::parse_error& e) {
        return std::unexpected(bad(file, "not valid TOML: " + std::string(e.description())));
    }
    // toml++ keeps keys sorted; containerd tries hosts in the order the file lists them.
    std::vector<std::pair<int, std::string>> ordered;
    if (const toml::table* hosts = root["host"].as_table()) {
        for (const auto& [key, node] : *hosts) {
            if (!node.is_table()) {
                return std::unexpected(
                    bad(file, "host.\"" + std::string(key.str()) + "\" is not a table"));
            }
            ordered.emplace_back(node.source().begin.line, std::string(key.str()));
        }
    }
    std::ranges::sort(ordered);
    std::vector<RegistryHost> result;
    for (const auto& [line, url] : ordered) {
        result.push_back(TRY(parse_host(url, *root["host"][url].as_table(), file)));
    }
    std::string server = root["server"].value_or(default_server(registry));
    RegistryHost upstream;
    upstream.api_root = TRY(api_root_of(with_scheme(server), false, file));
    if (auto ca = root["ca"].value<std::string>()) {
        std::filesystem::path path(*ca);
        upstream.ca_file =
            path.is_absolute() ? path.string() : (file.parent_path() / path).string();
    }
    result.push_back(std::move(upstream));
    return result;
}

} // namespace

util::Expected<std::vector<RegistryHost>>
registry_hosts(const std::optional<std::filesystem::path>& config_dir,
               const std::string& registry) {
    if (config_dir) {
        for (const std::string& name : {registry, std::string("_default")}) {
            std::filesystem::path file = *config_dir / name / "hosts.toml";
            std::error_code ec;
            if (std::filesystem::is_regular_file(file, ec)) {
                return read_hosts_file(file, registry);
            }
        }
    }
    RegistryHost upstream;
    upstream.api_root = default_server(registry) + "/v2";
    return std::vector<RegistryHost>{upstream};
}

} // namespace shimkeeper::fetch::oci
