// Putting a planned change on disk: pre-validation with containerd itself, the atomic write, and
// the copy of the previous content kept per generation so that a rollback can put it back.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/plan.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <filesystem>
#include <string>

namespace shimkeeper::containerd {

struct Prevalidation {
    bool checked = false; // false: nothing could check it (reason says why)
    std::string reason;
};

// Runs `containerd --config CANDIDATE config dump` on the new content, written to a temp file
// beside the target (so relative imports resolve the same) and removed afterwards. A failure
// carries containerd's own message. Templates (k3s/rke2) and removals cannot be checked this
// way; without a binary nothing can: those return checked = false with the reason.
util::Expected<Prevalidation> prevalidate(const Detection& detection, const FileChange& change,
                                          const util::HostRoot& root);

// Atomic replacement keeping mode and owner (util::AtomicFile), or removal when after is
// nullopt. Writes nothing when the file already holds `after` (its mtime stays).
util::Expected<void> write_change(const FileChange& change, const util::HostRoot& root);

// Saves change.before under backup_dir (a host path, e.g. <store>/state/generations/<n>/) as
// "containerd/<node path>", or an empty "<...>.absent" marker when the file did not exist.
util::Expected<void> keep_previous(const FileChange& change,
                                   const std::filesystem::path& backup_dir);

// The change that puts back what keep_previous saved for node_path, given what is there now.
util::Expected<FileChange> restore_previous(const std::filesystem::path& node_path,
                                            const std::filesystem::path& backup_dir,
                                            const util::HostRoot& root);

} // namespace shimkeeper::containerd
