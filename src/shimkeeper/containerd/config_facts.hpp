// Facts read from a parsed containerd config: its version, where CRI keeps runtimes in that
// version, the gRPC socket, and the imports list.
//
//   version missing -> 1: plugin "cri"
//   version 2 (containerd 1.x): plugin "io.containerd.grpc.v1.cri"
//   version 3 (containerd 2.0-2.2) and 4 (2.3): plugin "io.containerd.cri.v1.runtime";
//   version 4 moves the gRPC address into plugins."io.containerd.server.v1.grpc".
#pragma once

#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/util/error.hpp"

#include <optional>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace shimkeeper::containerd {

inline constexpr int k_max_config_version = 4;

util::Expected<int> config_version(const toml::table& config, const std::string& label);

std::string cri_plugin_id(int version);
KeyPath runtimes_path(int version); // plugins.<cri>.containerd.runtimes

std::optional<std::string> configured_socket(const toml::table& config, int version);

// CRI's registry host folder (`registry.config_path` of the CRI images plugin of this version,
// the folder holding <host>/hosts.toml), when the config sets one.
std::optional<std::string> registry_config_path(const toml::table& config, int version);

// The `imports` entries as written (paths or globs, maybe relative to the config's directory).
std::vector<std::string> config_imports(const toml::table& config);

// The text of a minimal config of this version, for a new file when no binary can say better.
std::string minimal_config(int version);

} // namespace shimkeeper::containerd
