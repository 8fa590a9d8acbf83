// The desired runtime and edit target the config engine's unit tests share: one spin shim on a
// version 2 config.
#pragma once

#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"

#include <string>

namespace shimkeeper::containerd::test {

// Whether the shim takes over (comments out) a user's entry of the same handler.
enum class Adopt { no, yes };

inline DesiredRuntime spin_runtime(Adopt adopt) {
    DesiredRuntime r;
    r.shim_name = "spin-v2";
    r.handler = "spin";
    r.runtime_type = "io.containerd.spin.v2";
    r.binary_node_path = "/var/lib/shimkeeper/bin/containerd-shim-spin-v2";
    r.digest = std::string(64, 'a');
    r.adopt = adopt == Adopt::yes;
    return r;
}

inline EditTarget v2_target() {
    EditTarget t;
    t.label = "/etc/containerd/config.toml";
    t.runtimes_path = runtimes_path(2);
    return t;
}

} // namespace shimkeeper::containerd::test
