// Which directories the daemon watches with inotify, and which of their events mean "the desired
// state may have changed". Pure: the loop (event_loop.cpp) owns the inotify sources.
//
// Directories, not files: editors and packages replace a file by renaming a temp file over it,
// which a watch on the old inode never reports. So each watch path is looked for by name in its
// parent directory (this also sees shims.d/ being created, deleted or renamed), and a watch path
// that is a directory gets a second watch on its own entries, reacting to what the desired-state
// loader reads: "*.toml" files not starting with a dot. "..data" is also a change: a Kubernetes
// ConfigMap volume mounted as shims.d/ swaps its content by renaming that symlink.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::daemon {

enum class WatchKind {
    named_entries, // the parent of watch paths: only entries whose name is in `names`
    toml_entries,  // a watched directory itself: its *.toml entries
};

struct DirWatch {
    std::filesystem::path dir;
    WatchKind kind = WatchKind::named_entries;
    std::vector<std::string> names; // named_entries only

    bool operator==(const DirWatch&) const = default;
};

// One named_entries watch per distinct parent directory (watch paths sharing a parent share
// it), then one toml_entries watch per watch path for which is_directory() says yes now.
// Paths are made lexically normal; a relative path's parent is ".".
std::vector<DirWatch>
plan_watches(const std::vector<std::filesystem::path>& watch_paths,
             const std::function<bool(const std::filesystem::path&)>& is_directory);

// The inotify mask to add a watch of this kind with.
std::uint32_t inotify_mask(WatchKind kind);

// Whether one inotify event (its name, possibly empty, and its mask) on this watch calls for a
// reconcile. A queue overflow or the watched directory itself vanishing always does.
bool is_relevant(const DirWatch& watch, std::string_view name, std::uint32_t mask);

} // namespace shimkeeper::daemon
