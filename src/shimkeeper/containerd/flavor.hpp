// Where each containerd distribution keeps its config, binary, socket and unit (DESIGN.md,
// "Flavors"). Facts only; detection.cpp decides which applies to a node.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::containerd {

enum class Flavor { containerd, k3s, rke2, microk8s, k0s };

std::string_view to_string(Flavor flavor);
std::optional<Flavor> parse_flavor(std::string_view name);

struct FlavorLayout {
    std::string marker;      // node path whose existence identifies the flavor ("" = fallback)
    std::string config_path; // root config containerd reads (node path)
    std::string socket;      // default gRPC socket
    std::vector<std::string> units;    // candidate units, first whose unit file exists wins
    std::vector<std::string> binaries; // candidate containerd binaries (node paths)
};

const FlavorLayout& layout(Flavor flavor);

// Directories searched for unit files, to choose between e.g. k3s and k3s-agent.
const std::vector<std::string>& unit_directories();

} // namespace shimkeeper::containerd
