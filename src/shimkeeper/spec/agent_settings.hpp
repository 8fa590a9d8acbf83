// Agent settings from shimkeeper.toml. Empty/absent values mean "autodetect".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace shimkeeper::spec {

struct ContainerdSettings {
    std::optional<std::string> config_path; // node path of containerd's config
    std::optional<std::string> unit;        // systemd unit restarted after an edit
    std::optional<std::string> socket;      // containerd's gRPC socket
    std::optional<std::string> binary;      // containerd binary (for version and config dump)
    std::optional<std::string> flavor;      // containerd | k3s | rke2 | microk8s | k0s
};

enum class BusKind { system, user };

struct SystemdSettings {
    BusKind bus = BusKind::system;
    // The least time between two restarts of containerd by shimkeeper (RestartGuard).
    std::chrono::milliseconds restart_spacing{2'000};
};

struct StoreSettings {
    std::string dir = "/var/lib/shimkeeper"; // node path
    int keep_generations = 2;
};

struct HealthSettings {
    std::chrono::milliseconds timeout{30'000};
};

struct FetchSettings {
    std::chrono::milliseconds connect_timeout{15'000};
    std::chrono::milliseconds stall_timeout{30'000}; // no bytes for this long: give up
    std::chrono::milliseconds total_timeout{600'000};
    std::uint64_t max_size = 512ull << 20;
    int retries = 3; // extra attempts after the first, on connection errors, 5xx and 429
    std::optional<std::string> ca_bundle;
    // OCI registries: a containers/docker auth file (default: the usual places for root), and
    // containerd's registry host folder (certs.d/<host>/hosts.toml; default
    // /etc/containerd/certs.d when it exists).
    std::optional<std::string> auth_file;
    std::optional<std::string> registry_config_path;
};

// [kube]: cluster mode. Absent: file mode only, nothing talks to a cluster.
struct KubeSettings {
    // The node's credential, for everything the agent does in the cluster; default the
    // kubelet's kubeconfig. The Node it speaks for is the API server's answer (self_identity).
    std::optional<std::string> kubeconfig;
    std::optional<std::string> node_name; // may only repeat the credential's node name
    std::string namespace_name = "shimkeeper-system";
    // A Shim waiting for a rollout slot has its pinned artifact fetched before the node asks for
    // one (reconcile/stage_ahead.hpp); false: the slot's transaction fetches it, so that a
    // halted rollout has not downloaded to every node.
    bool stage_ahead = true;
};

// [metrics]: node_exporter's textfile collector. The file is written only where the directory
// exists (a node without node_exporter gets no stray folder).
struct MetricsSettings {
    bool enabled = true;
    std::string textfile_dir = "/var/lib/prometheus/node-exporter"; // node path, Debian's default
};

struct AgentSettings {
    ContainerdSettings containerd;
    SystemdSettings systemd;
    StoreSettings store;
    HealthSettings health;
    FetchSettings fetch;
    std::optional<KubeSettings> kube;
    MetricsSettings metrics;
};

} // namespace shimkeeper::spec
