#include "shimkeeper/spec/settings_parser.hpp"

#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/table_reader.hpp"

#include <optional>

namespace shimkeeper::spec {

namespace {

constexpr std::int64_t k_max_retries = 10;
constexpr std::int64_t k_max_keep = 1000;
constexpr std::chrono::seconds k_max_restart_spacing{600};

// A string setting that names something on the node: not empty, no control characters.
util::Expected<std::optional<std::string>> read_setting(const TableReader& table,
                                                        std::string_view key) {
    auto value = TRY(table.string(key));
    if (!value) {
        return value;
    }
    if (value->empty()) {
        return table.fail_key(key, "is empty; remove the key to autodetect it");
    }
    for (char c : *value) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return table.fail_key(key, "must not contain control characters");
        }
    }
    return value;
}

util::Expected<std::optional<std::string>> read_absolute_path(const TableReader& table,
                                                              std::string_view key) {
    auto value = TRY(table.string(key));
    if (value) {
        if (auto problem = absolute_path_problem(*value)) {
            return table.fail_key(key, *problem + " (got \"" + *value + "\")");
        }
    }
    return value;
}

util::Expected<void> parse_containerd(const TableReader& table, ContainerdSettings& out) {
    TRY(table.only_keys({"config_path", "unit", "socket", "binary", "flavor"}));
    out.config_path = TRY(read_absolute_path(table, "config_path"));
    out.unit = TRY(read_setting(table, "unit"));
    out.socket = TRY(read_setting(table, "socket"));
    out.binary = TRY(read_setting(table, "binary"));
    out.flavor = TRY(table.string("flavor"));
    if (out.flavor && *out.flavor != "containerd" && *out.flavor != "k3s" &&
        *out.flavor != "rke2" && *out.flavor != "microk8s" && *out.flavor != "k0s") {
        return table.fail_key("flavor", "is \"" + *out.flavor +
                                            "\"; it must be one of containerd, k3s, rke2, "
                                            "microk8s, k0s (or left out to autodetect)");
    }
    return {};
}

util::Expected<void> parse_systemd(const TableReader& table, SystemdSettings& out) {
    TRY(table.only_keys({"bus", "restart_spacing"}));
    if (auto spacing = TRY(table.seconds("restart_spacing"))) {
        if (*spacing > k_max_restart_spacing) {
            return table.fail_key("restart_spacing",
                                  "must be at most 600 seconds (the least time between two "
                                  "restarts of containerd by shimkeeper)");
        }
        out.restart_spacing = *spacing;
    }
    if (auto bus = TRY(table.string("bus"))) {
        if (*bus == "system") {
            out.bus = BusKind::system;
        } else if (*bus == "user") {
            out.bus = BusKind::user;
        } else {
            return table.fail_key("bus", "is \"" + *bus + "\"; it must be \"system\" or \"user\"");
        }
    }
    return {};
}

util::Expected<void> parse_store(const TableReader& table, StoreSettings& out) {
    TRY(table.only_keys({"dir", "keep"}));
    if (auto dir = TRY(read_absolute_path(table, "dir"))) {
        out.dir = std::move(*dir);
    }
    if (auto keep = TRY(table.integer("keep"))) {
        if (*keep < 1 || *keep > k_max_keep) {
            return table.fail_key("keep", "must be between 1 and 1000 (the number of "
                                          "generations kept for rollback), got " +
                                              std::to_string(*keep));
        }
        out.keep_generations = static_cast<int>(*keep);
    }
    return {};
}

util::Expected<void> parse_health(const TableReader& table, HealthSettings& out) {
    TRY(table.only_keys({"timeout"}));
    if (auto timeout = TRY(table.seconds("timeout"))) {
        out.timeout = *timeout;
    }
    return {};
}

util::Expected<void> parse_fetch_settings(const TableReader& table, FetchSettings& out) {
    // A shim's source in the agent's [fetch] table is a common slip: point at [shim.fetch].
    for (std::string_view key : {"url", "sha256", "platform"}) {
        if (table.has(key)) {
            return fail_at(table.where(key),
                           "unknown key '" + std::string(key) +
                               "' in [fetch], which holds download settings; a shim's source "
                               "goes in [shim.fetch] after its [[shim]]");
        }
    }
    TRY(table.only_keys({"connect_timeout", "stall_timeout", "total_timeout", "max_size", "retries",
                         "ca_bundle", "auth_file", "registry_config_path"}));
    out.connect_timeout = TRY(table.seconds("connect_timeout")).value_or(out.connect_timeout);
    out.stall_timeout = TRY(table.seconds("stall_timeout")).value_or(out.stall_timeout);
    out.total_timeout = TRY(table.seconds("total_timeout")).value_or(out.total_timeout);
    if (auto max_size = TRY(table.integer("max_size"))) {
        if (*max_size <= 0) {
            return table.fail_key("max_size", "must be a number of bytes greater than 0, got " +
                                                  std::to_string(*max_size));
        }
        out.max_size = static_cast<std::uint64_t>(*max_size);
    }
    if (auto retries = TRY(table.integer("retries"))) {
        if (*retries < 0 || *retries > k_max_retries) {
            return table.fail_key("retries",
                                  "must be between 0 and 10, got " + std::to_string(*retries));
        }
        out.retries = static_cast<int>(*retries);
    }
    if (auto ca_bundle = TRY(read_absolute_path(table, "ca_bundle"))) {
        out.ca_bundle = std::move(*ca_bundle);
    }
    out.auth_file = TRY(read_absolute_path(table, "auth_file"));
    out.registry_config_path = TRY(read_absolute_path(table, "registry_config_path"));
    return {};
}

util::Expected<void> parse_kube(const TableReader& table, std::optional<KubeSettings>& out) {
    if (table.has("node_kubeconfig")) {
        // The agent has one identity now, its Node's: a second, shared credential for Shims,
        // Leases and Events was a key to every node (README, "Moving from shimkeeper-agent").
        return table.fail_key("node_kubeconfig",
                              "is no longer read: the agent uses one node credential. Point "
                              "kubeconfig at it (a token of shimkeeper-system/shimkeeper-node "
                              "bound to this Node, or the kubelet's kubeconfig) and remove "
                              "node_kubeconfig");
    }
    TRY(table.only_keys({"kubeconfig", "node_name", "namespace", "stage_ahead"}));
    KubeSettings kube;
    kube.kubeconfig = TRY(read_absolute_path(table, "kubeconfig"));
    if (auto name = TRY(table.string("node_name"))) {
        if (!is_valid_node_name(*name)) {
            return table.fail_key("node_name", "is \"" + *name +
                                                   "\": a Node name is lowercase letters, digits, "
                                                   "'-' and '.', at most 253 characters");
        }
        kube.node_name = std::move(*name);
    }
    if (auto ns = TRY(table.string("namespace"))) {
        if (!is_valid_name(*ns)) {
            return table.fail_key("namespace", "is \"" + *ns + "\", not a namespace name");
        }
        kube.namespace_name = std::move(*ns);
    }
    kube.stage_ahead = TRY(table.boolean("stage_ahead")).value_or(kube.stage_ahead);
    out = std::move(kube);
    return {};
}

util::Expected<void> parse_metrics(const TableReader& table, MetricsSettings& out) {
    TRY(table.only_keys({"enabled", "textfile_dir"}));
    out.enabled = TRY(table.boolean("enabled")).value_or(out.enabled);
    if (auto dir = TRY(read_absolute_path(table, "textfile_dir"))) {
        out.textfile_dir = std::move(*dir);
    }
    return {};
}

template <typename Settings>
util::Expected<void> parse_table(const toml::table& root, std::string_view key,
                                 const std::string& file, Settings& out,
                                 util::Expected<void> (*parse)(const TableReader&, Settings&)) {
    const toml::node* node = root.get(key);
    if (node == nullptr) {
        return {};
    }
    const std::string label = "[" + std::string(key) + "]";
    if (!node->is_table()) {
        return fail_at(location_of(node->source(), file),
                       "'" + std::string(key) + "' must be a table: write " + label);
    }
    return parse(TableReader(*node->as_table(), label, file), out);
}

} // namespace

util::Expected<AgentSettings> parse_agent_settings(const toml::table& root,
                                                   const std::string& file) {
    AgentSettings settings;
    TRY(parse_table(root, "containerd", file, settings.containerd, &parse_containerd));
    TRY(parse_table(root, "systemd", file, settings.systemd, &parse_systemd));
    TRY(parse_table(root, "store", file, settings.store, &parse_store));
    TRY(parse_table(root, "health", file, settings.health, &parse_health));
    TRY(parse_table(root, "fetch", file, settings.fetch, &parse_fetch_settings));
    TRY(parse_table(root, "kube", file, settings.kube, &parse_kube));
    TRY(parse_table(root, "metrics", file, settings.metrics, &parse_metrics));
    return settings;
}

} // namespace shimkeeper::spec
