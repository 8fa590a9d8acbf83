// What one shim's runtime entry in containerd's config holds, and how it points at the shim.
//
// containerd 1.6.x ignores `runtime_path` (containerd bug #8207, fixed in 1.7; Debian 12's 1.6.20
// fails with "binary not installed"), while every containerd since 1.6.0 accepts the shim's
// absolute path as `runtime_type`. So: `runtime_type = "io.containerd.<name>.v2"` plus
// `runtime_path` only when the binary is known to be >= 1.7; the absolute path as `runtime_type`
// otherwise, including when no containerd binary can be found (that form works on 1.6, 1.7, 2.x).
//
// Caveat of the path form: CRI decodes `options` by runtime_type, as runc options only for
// exactly "io.containerd.runc.v2" and as generic ConfigPath/ConfigBody options otherwise. So on
// containerd < 1.7 a runc-typed shim's runc options (BinaryName, SystemdCgroup, ...) are
// silently ignored; only >= 1.7 (runtime_path form) honours both the binary and its options.
#pragma once

#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/containerd/version.hpp"
#include "shimkeeper/spec/shim_spec.hpp"

#include <optional>
#include <string>
#include <toml++/toml.h>

namespace shimkeeper::containerd {

struct DesiredRuntime {
    std::string shim_name;        // names the managed block
    std::string handler;          // key under <cri>.containerd.runtimes
    std::string runtime_type;     // from the spec: io.containerd.<name>.v2 or an absolute path
    std::string binary_node_path; // <store>/bin/<binary>, a node path (never under --root)
    std::string digest;           // sha256 hex of the artifact, written into the marker
    toml::table options;          // the runtime's options table
    bool adopt = false;           // may take over a handler defined outside shimkeeper's blocks
};

// binary_node_path: the shim's bin/ link as the node sees it (store::Store::binary_node_path).
DesiredRuntime desired_runtime(const spec::ShimSpec& shim, std::string binary_node_path,
                               const std::string& digest);

enum class Pointing { runtime_path, absolute_type };

Pointing choose_pointing(const std::optional<ContainerdVersion>& binary_version);

inline constexpr std::string_view k_runc_v2_type = "io.containerd.runc.v2";

// The table written at <runtimes>.<handler>. A runc-typed handler inherits `SystemdCgroup` from
// the default runtime of `defaults` (the config that holds the default runtime) unless the spec
// sets it.
toml::table runtime_table(const DesiredRuntime& runtime, Pointing pointing,
                          const toml::table& defaults, const KeyPath& runtimes_path);

} // namespace shimkeeper::containerd
