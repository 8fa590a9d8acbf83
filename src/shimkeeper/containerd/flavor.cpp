#include "shimkeeper/containerd/flavor.hpp"

#include <array>

namespace shimkeeper::containerd {

std::string_view to_string(Flavor flavor) {
    switch (flavor) {
    case Flavor::containerd:
        return "containerd";
    case Flavor::k3s:
        return "k3s";
    case Flavor::rke2:
        return "rke2";
    case Flavor::microk8s:
        return "microk8s";
    case Flavor::k0s:
        return "k0s";
    }
    return "containerd";
}

std::optional<Flavor> parse_flavor(std::string_view name) {
    for (Flavor f :
         {Flavor::containerd, Flavor::k3s, Flavor::rke2, Flavor::microk8s, Flavor::k0s}) {
        if (to_string(f) == name) {
            return f;
        }
    }
    return std::nullopt;
}

const FlavorLayout& layout(Flavor flavor) {
    // k3s/rke2 regenerate config.toml at every start from config.toml.tmpl (or
    // config-v3.toml.tmpl); microk8s renders containerd-template.toml; k0s merges
    // /etc/k0s/containerd.d/*.toml itself and needs no restart.
    static const std::array<FlavorLayout, 5> k_layouts{{
        {"",
         "/etc/containerd/config.toml",
         "/run/containerd/containerd.sock",
         {"containerd.service"},
         {"/usr/bin/containerd", "/usr/local/bin/containerd", "/usr/sbin/containerd"}},
        {"/var/lib/rancher/k3s/agent/etc/containerd",
         "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
         "/run/k3s/containerd/containerd.sock",
         {"k3s.service", "k3s-agent.service"},
         {"/var/lib/rancher/k3s/data/current/bin/containerd"}},
        {"/var/lib/rancher/rke2/agent/etc/containerd",
         "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
         "/run/k3s/containerd/containerd.sock",
         {"rke2-server.service", "rke2-agent.service"},
         {"/var/lib/rancher/rke2/bin/containerd"}},
        {"/var/snap/microk8s/current/args/containerd-template.toml",
         "/var/snap/microk8s/current/args/containerd-template.toml",
         "/var/snap/microk8s/common/run/containerd.sock",
         {"snap.microk8s.daemon-containerd.service"},
         {"/snap/microk8s/current/bin/containerd"}},
        {"/etc/k0s/containerd.d",
         "/etc/k0s/containerd.toml",
         "/run/k0s/containerd.sock",
         {},
         {"/var/lib/k0s/bin/containerd"}},
    }};
    return k_layouts[static_cast<std::size_t>(flavor)];
}

const std::vector<std::string>& unit_directories() {
    static const std::vector<std::string> k_dirs{"/etc/systemd/system",
                                                 "/usr/local/lib/systemd/system",
                                                 "/lib/systemd/system", "/usr/lib/systemd/system"};
    return k_dirs;
}

} // namespace shimkeeper::containerd
