// Which stored artifacts running processes execute. containerd runs a shim binary again long
// after an upgrade (`delete` when its container goes), and a running shim holds its binary's
// path: garbage collection must keep such an artifact until the last process of it is gone.
// The kernel's own answer is /proc/<pid>/exe; reading other users' entries needs root, which
// the agent is (an unreadable entry is skipped: it cannot be a shim of this store's owner).
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace shimkeeper::store {

// Digests (directory names below `artifacts_root`, a host path) that some process in `proc`
// executes from, a deleted-but-running file included.
std::set<std::string> artifacts_in_use(const std::filesystem::path& artifacts_root,
                                       const std::filesystem::path& proc = "/proc");

} // namespace shimkeeper::store
