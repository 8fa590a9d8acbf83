#pragma once

#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/runtime_entry.hpp"

#include <string>
#include <vector>

namespace shimkeeper::containerd {

// containerd 1.x decodes a config's `runtimes` table into a fresh map, so a file that names any
// runtime loses the built-in "runc" unless it names that too; CRI then fails to load ("no
// corresponding runtime configured in `containerd.runtimes` for `containerd`
// `default_runtime_name`"), which is not fatal, so containerd runs on without CRI. Seen with
// Debian's 1.6.20. So when the user's own content does not define the default runtime, a block
// named k_default_runtime_block defines runc as containerd's default has it. Not needed for a
// drop-in (2.x merges) or a template rendering k3s/rke2's base (which defines runc).
bool needs_default_runtime(const std::vector<std::string>& lines, const EditTarget& target,
                           const std::vector<DesiredRuntime>& desired);

} // namespace shimkeeper::containerd
