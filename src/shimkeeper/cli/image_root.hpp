// What `bake` needs to know about an image root that is not running, found without running
// anything in it: containerd's version (its package database, or the operator's flag) and
// where the shimkeeper package put its unit. Enabling the unit is what `systemctl enable` does
// offline: a symlink in multi-user.target.wants/ to the unit's node path.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <filesystem>
#include <string>

namespace shimkeeper::cli {

inline constexpr const char* k_agent_unit = "shimkeeper.service";

// `flag`: --containerd-version as given (empty: read DIR/var/lib/dpkg/status). A root without
// containerd, or whose version cannot be known, is bad input (exit 2) saying what to do.
util::Expected<containerd::KnownVersion> image_containerd_version(const util::HostRoot& root,
                                                                  const std::string& flag);

// The node path of shimkeeper.service in /lib/systemd/system or /usr/lib/systemd/system.
util::Expected<std::filesystem::path> packaged_unit(const util::HostRoot& root);

enum class Enabled { now, already };

// <root>/etc/systemd/system/multi-user.target.wants/shimkeeper.service -> unit (a node path),
// made atomically. A link that already leads to a shimkeeper.service is left as it is.
util::Expected<Enabled> enable_unit(const util::HostRoot& root, const std::filesystem::path& unit);

} // namespace shimkeeper::cli
