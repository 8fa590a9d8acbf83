#include "shimkeeper/containerd/config_facts.hpp"

#include "shimkeeper/containerd/toml_tree.hpp"

namespace shimkeeper::containerd {

util::Expected<int> config_version(const toml::table& config, const std::string& label) {
    const toml::node* node = config.get("version");
    if (node == nullptr) {
        return 1;
    }
    auto version = node->value<std::int64_t>();
    if (!node->is_integer() || !version || *version < 1 || *version > k_max_config_version) {
        return util::fail(util::ErrorCode::invalid_input,
                          label + ":" + std::to_string(node->source().begin.line) +
                              ": `version` must be an integer from 1 to " +
                              std::to_string(k_max_config_version) + "; fix containerd's config");
    }
    return static_cast<int>(*version);
}

std::string cri_plugin_id(int version) {
    if (version <= 1) {
        return "cri";
    }
    return version == 2 ? "io.containerd.grpc.v1.cri" : "io.containerd.cri.v1.runtime";
}

KeyPath runtimes_path(int version) {
    return {"plugins", cri_plugin_id(version), "containerd", "runtimes"};
}

std::optional<std::string> configured_socket(const toml::table& config, int version) {
    KeyPath path = version >= 4 ? KeyPath{"plugins", "io.containerd.server.v1.grpc", "address"}
                                : KeyPath{"grpc", "address"};
    const toml::node* node = find_node(config, path);
    if (node == nullptr || !node->is_string() || node->value_or(std::string()).empty()) {
        return std::nullopt;
    }
    return node->value_or(std::string());
}

std::vector<std::string> config_imports(const toml::table& config) {
    std::vector<std::string> out;
    if (const auto* imports = config.get_as<toml::array>("imports")) {
        for (const auto& entry : *imports) {
            if (auto text = entry.value<std::string>()) {
                out.push_back(*text);
            }
        }
    }
    return out;
}

std::string minimal_config(int version) {
    if (version <= 1) {
        return "";
    }
    return "version = " + std::to_string(version) + "\n";
}

std::optional<std::string> registry_config_path(const toml::table& config, int version) {
    // Version 3 moved image pulling, registries included, into its own CRI images plugin.
    const std::string id = version >= 3 ? "io.containerd.cri.v1.images" : cri_plugin_id(version);
    auto path = config["plugins"][id]["registry"]["config_path"].value<std::string>();
    if (!path || path->empty()) {
        return std::nullopt;
    }
    return path;
}

} // namespace shimkeeper::containerd
