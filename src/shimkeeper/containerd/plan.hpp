// plan_edits: the new content of every containerd config file the desired runtimes need.
// Reads files (through the HostRoot) and may run `containerd config default`, but writes nothing.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/runtime_entry.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::containerd {

struct FileChange {
    std::filesystem::path node_path;
    std::optional<std::string> before;  // nullopt: the file is absent
    std::optional<std::string> after;   // nullopt: the file is to be removed
    bool created_by_shimkeeper = false; // carries shimkeeper's "created" marker
};

// Every file whose content must change; empty when the node already matches (nothing to write,
// no restart). `desired` is the whole desired set: blocks of shims not in it are removed.
util::Expected<std::vector<FileChange>> plan_edits(const Detection& detection,
                                                   const std::vector<DesiredRuntime>& desired,
                                                   const util::HostRoot& root);

// True when containerd must be restarted for the changes to take effect.
bool needs_restart(const Detection& detection, const std::vector<FileChange>& changes);

} // namespace shimkeeper::containerd
