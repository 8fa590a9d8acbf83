#include "shimkeeper/containerd/runtime_entry.hpp"

#include "shimkeeper/containerd/toml_tree.hpp"

namespace shimkeeper::containerd {

DesiredRuntime desired_runtime(const spec::ShimSpec& shim, std::string binary_node_path,
                               const std::string& digest) {
    DesiredRuntime runtime;
    runtime.shim_name = shim.name;
    runtime.handler = shim.handler;
    runtime.runtime_type = shim.runtime_type;
    runtime.binary_node_path = std::move(binary_node_path);
    runtime.digest = digest;
    runtime.options = shim.options;
    runtime.adopt = shim.adopt;
    return runtime;
}

Pointing choose_pointing(const std::optional<ContainerdVersion>& binary_version) {
    // Unknown version: the absolute-path form is the one every containerd since 1.6.0 honours.
    if (binary_version && *binary_version >= ContainerdVersion{1, 7, 0}) {
        return Pointing::runtime_path;
    }
    return Pointing::absolute_type;
}

namespace {

std::optional<bool> default_systemd_cgroup(const toml::table& defaults,
                                           const KeyPath& runtimes_path) {
    KeyPath containerd_path(runtimes_path.begin(), runtimes_path.end() - 1);
    std::string default_name = "runc";
    if (const auto* name = find_node(defaults, containerd_path)) {
        if (const auto* table = name->as_table()) {
            default_name = table->get("default_runtime_name")
                               ? table->get("default_runtime_name")->value_or(default_name)
                               : default_name;
        }
    }
    KeyPath path = runtimes_path;
    path.insert(path.end(), {default_name, "options", "SystemdCgroup"});
    const auto* node = find_node(defaults, path);
    if (node == nullptr || !node->is_boolean()) {
        return std::nullopt;
    }
    return node->value<bool>();
}

} // namespace

toml::table runtime_table(const DesiredRuntime& runtime, Pointing pointing,
                          const toml::table& defaults, const KeyPath& runtimes_path) {
    toml::table entry;
    bool absolute_spec_type = runtime.runtime_type.starts_with('/');
    if (pointing == Pointing::runtime_path && !absolute_spec_type) {
        entry.insert_or_assign("runtime_type", runtime.runtime_type);
        entry.insert_or_assign("runtime_path", runtime.binary_node_path);
    } else {
        entry.insert_or_assign("runtime_type", runtime.binary_node_path);
    }
    toml::table options = runtime.options;
    if (runtime.runtime_type == k_runc_v2_type && !options.contains("SystemdCgroup")) {
        if (auto inherited = default_systemd_cgroup(defaults, runtimes_path)) {
            options.insert_or_assign("SystemdCgroup", *inherited);
        }
    }
    if (!options.empty()) {
        entry.insert_or_assign("options", std::move(options));
    }
    return entry;
}

} // namespace shimkeeper::containerd
