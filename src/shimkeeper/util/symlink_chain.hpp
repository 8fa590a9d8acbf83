// Where a node path really leads: config management and some image layouts make
// /etc/containerd/config.toml a symlink into a tree they own. shimkeeper edits the file at the
// end of the chain, in its own directory, so the link stays a link and its owner keeps owning
// the content.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <filesystem>
#include <vector>

namespace shimkeeper::util {

struct ResolvedPath {
    std::filesystem::path node_path;            // the end of the chain, as the node sees it
    std::filesystem::path host_path;            // root.on_host(node_path)
    std::vector<std::filesystem::path> through; // the links followed, first to last (node paths)
};

// Follows the final component's symlinks (relative to the link's directory, absolute ones as
// node paths, so a chain under --root stays under it). A missing end is fine (a file to
// create). Refused: a loop (or more than 40 links), and under --root a relative target that
// climbs above the root.
Expected<ResolvedPath> resolve_symlinks(const HostRoot& root,
                                        const std::filesystem::path& node_path);

} // namespace shimkeeper::util
