// The containerd binary's version decides how a runtime points at its shim (see runtime_entry.hpp)
// and whether a drop-in is safe (see detection.cpp).
#pragma once

#include "shimkeeper/util/error.hpp"

#include <compare>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::containerd {

struct ContainerdVersion {
    int major = 0;
    int minor = 0;
    int patch = 0;

    auto operator<=>(const ContainerdVersion&) const = default;
    std::string to_string() const;
};

// Finds the first "[v]X.Y.Z" token in `containerd --version` output, e.g.
// "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3" -> 1.6.20,
// "containerd github.com/k3s-io/containerd v1.7.11-k3s2 64b8a8ac" -> 1.7.11.
std::optional<ContainerdVersion> parse_containerd_version(std::string_view output);

// Runs `<binary> --version` (a host path).
util::Expected<ContainerdVersion> query_containerd_version(const std::filesystem::path& binary);

} // namespace shimkeeper::containerd
