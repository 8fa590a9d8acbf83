// What containerd setup a node has, and which file shimkeeper edits there, with the reasons for
// every choice (printed by `status`). Reads files and runs `containerd --version` (and
// `containerd config default` when the config is missing); writes nothing.
#pragma once

#include "shimkeeper/containerd/flavor.hpp"
#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/containerd/version.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::containerd {

struct Detection {
    enum class Mode { in_place, drop_in };

    Flavor flavor = Flavor::containerd;
    std::filesystem::path config_path; // node path of the root config containerd reads
    std::filesystem::path target_path; // node path of the file edited: root, template or drop-in
    Mode mode = Mode::in_place;
    Masking masking = Masking::none; // go_template for k3s/rke2 templates
    int config_version = 2;
    std::string cri_plugin;       // plugin id, e.g. io.containerd.grpc.v1.cri
    KeyPath runtimes_path;        // plugins.<cri>.containerd.runtimes
    std::filesystem::path binary; // node path of containerd; empty when none was found
    std::optional<ContainerdVersion> binary_version;
    std::string socket;
    // CRI's registry host folder from the root config (node path), when it sets one.
    std::optional<std::string> registry_config_path;
    std::string unit; // systemd unit to restart; empty when none is needed (k0s)
    bool config_exists = false;
    bool target_exists = false;
    // What `containerd config default` printed, when the target is missing and a binary exists.
    std::optional<std::string> default_config;
    std::vector<std::string> reasons; // "flavor k3s: /var/lib/rancher/... exists", ...
};

std::string_view to_string(Detection::Mode mode);

// A version known without running the binary (an image root: its package database, a flag).
struct KnownVersion {
    ContainerdVersion version;
    std::string source; // for the reasons: "/var/lib/dpkg/status: containerd 1.6.20~ds1-1"
};

// version_cache: a host path remembering `containerd --version` per binary (empty: no cache).
// known_version: run nothing at all (no --version, no `config default`); bake's image roots.
util::Expected<Detection> detect(const util::HostRoot& root,
                                 const spec::ContainerdSettings& settings,
                                 const std::filesystem::path& version_cache = {},
                                 const std::optional<KnownVersion>& known_version = std::nullopt);

} // namespace shimkeeper::containerd
