// The content-addressed store below the store dir (default /var/lib/shimkeeper):
//   store/sha256/<digest>/  unpacked files of one artifact: complete or absent, never changed
//   bin/<binary>            symlink to the node path of one artifact's binary, flipped atomically
//   tmp/                    downloads and staging (same filesystem, so renames are atomic)
//   state/state.json        generations (state.hpp)
// Paths this process touches are host paths (HostRoot::on_host); what goes into symlinks is the
// node path, so a store baked under --root works once the image boots.
#pragma once

#include "shimkeeper/archive/unpack.hpp"
#include "shimkeeper/store/state.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shimkeeper::store {

// tmp/ entries untouched for this long belong to a run that crashed, not to one in progress.
inline constexpr std::chrono::seconds k_stale_tmp_age{3600};

class Store {
public:
    Store(util::HostRoot root, std::filesystem::path node_dir);

    std::filesystem::path artifact_dir(const std::string& digest) const; // host path
    bool has_artifact(const std::string& digest) const;
    // What a stored artifact holds, described the way archive::unpack reports it (sorted by
    // path, symlinks not followed), so that locate_binary works on it without a new download.
    util::Expected<archive::UnpackResult> artifact_listing(const std::string& digest) const;
    std::vector<std::string> artifact_digests() const; // sorted

    util::Expected<void> ensure_layout() const; // creates store/sha256, bin, tmp, state
    std::filesystem::path tmp_dir() const;      // host paths
    std::filesystem::path bin_dir() const;
    std::filesystem::path state_dir() const;
    std::filesystem::path state_file() const;

    // Moves a complete staging folder into store/sha256/<digest>/ with one rename, after
    // flushing its filesystem (syncfs) so that a crash cannot publish a half-written tree. If
    // the digest is already there (a concurrent fetch), removes the staging folder and succeeds.
    util::Expected<void> commit_artifact(const std::filesystem::path& staging,
                                         const std::string& digest) const;

    // Puts a fresh copy in place of a stored artifact that was changed by hand: the two folders
    // are exchanged with one rename (RENAME_EXCHANGE), so store/sha256/<digest>/ is never missing
    // (containerd's config points into it); the changed copy is then deleted. Without an
    // artifact of that digest, behaves as commit_artifact.
    util::Expected<void> replace_artifact(const std::filesystem::path& staging,
                                          const std::string& digest) const;

    // bin/<binary> -> node path of store/sha256/<digest>/<binary_path>: a symlink made under a
    // temp name, then renamed over the old one, so a reader sees the old target or the new.
    util::Expected<void> link_binary(const std::string& binary, const std::string& digest,
                                     const std::string& binary_path) const;
    // bin/<binary> -> `target` (a node path), atomically; restores a journal's before-state.
    util::Expected<void> link_to(const std::string& binary, const std::string& target) const;
    // Removes bin/<binary>; a missing link is fine, anything but a symlink is refused.
    util::Expected<void> unlink_binary(const std::string& binary) const;
    std::optional<std::string> binary_link_target(const std::string& binary) const; // node path
    std::filesystem::path binary_node_path(const std::string& binary) const;
    // The node path a link to this artifact's binary holds.
    std::filesystem::path binary_target_node_path(const std::string& digest,
                                                  const std::string& binary_path) const;

    util::Expected<StoreState> load_state() const;
    util::Expected<void> save_state(const StoreState& state) const;

    // Removes artifacts not used by the newest `keep` generations (and older generations'
    // records), never the current generation's, never anything a bin/ link points to, never
    // one whose binary a process in `proc` runs, never one named in `also_keep` (artifacts
    // staged ahead of a rollout slot: no generation uses them yet). The state is saved first, then
    // each artifact is renamed into tmp/ and deleted, so a crash leaves only unreferenced
    // leftovers; then the fingerprint and OCI records of artifacts no longer stored go. Returns the
    // digests removed, sorted.
    util::Expected<std::vector<std::string>>
    collect_garbage(int keep, const std::filesystem::path& proc = "/proc",
                    const std::set<std::string>& also_keep = {}) const;

    // Removes tmp/ leftovers of crashed runs: entries not modified for `older_than`. Pass zero
    // when the caller knows no other run is using the store.
    util::Expected<void> clean_tmp(std::chrono::seconds older_than = k_stale_tmp_age) const;

    const util::HostRoot& host_root() const { return m_root; }
    const std::filesystem::path& node_dir() const { return m_node_dir; }

private:
    std::filesystem::path host_dir() const { return m_root.on_host(m_node_dir); }
    std::filesystem::path artifacts_root() const; // host path of store/sha256
    util::Expected<void> check_binary_name(const std::string& binary) const;

    util::HostRoot m_root;
    std::filesystem::path m_node_dir;
};

} // namespace shimkeeper::store
