// Store::collect_garbage and Store::clean_tmp: what the store may forget, and in which order.
// Generation records go first (state saved atomically), artifacts after: a crash in between
// leaves artifacts nobody references, which the next run removes, never a record whose
// artifact is gone (rollback relies on those). An artifact leaves store/sha256 by one rename
// into tmp/, so it stays "complete or absent" even while its files are deleted. An artifact a
// running process executes is kept (running_binaries.hpp).
#include "shimkeeper/store/store.hpp"

#include "shimkeeper/store/oci_record.hpp"
#include "shimkeeper/store/running_binaries.hpp"
#include "shimkeeper/store/tamper.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <set>
#include <sys/stat.h>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

// The digest a bin/ link points into, if it points into this store.
std::optional<std::string> linked_digest(const fs::path& store_node_dir, const fs::path& target) {
    fs::path relative =
        target.lexically_normal().lexically_relative(store_node_dir / "store" / "sha256");
    if (relative.empty() || *relative.begin() == "..") {
        return std::nullopt;
    }
    return relative.begin()->string();
}

} // namespace

util::Expected<std::vector<std::string>>
Store::collect_garbage(int keep, const fs::path& proc,
                       const std::set<std::string>& also_keep) const {
    StoreState state = TRY(load_state());
    keep = std::max(keep, 1);
    // Generations are ascending: the newest `keep` are at the end; the current one always stays.
    std::vector<Generation> kept;
    std::size_t first_kept = state.generations.size() > static_cast<std::size_t>(keep)
                                 ? state.generations.size() - static_cast<std::size_t>(keep)
                                 : 0;
    for (std::size_t i = 0; i < state.generations.size(); ++i) {
        const Generation& generation = state.generations[i];
        if (i >= first_kept || (state.current && *state.current == generation.number)) {
            kept.push_back(generation);
        }
    }
    std::set<std::string> in_use = also_keep;
    for (const Generation& generation : kept) {
        for (const InstalledShim& shim : generation.shims) {
            in_use.insert(shim.digest);
        }
    }
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(bin_dir(), ec)) {
        std::error_code link_ec;
        fs::path target = fs::read_symlink(entry.path(), link_ec);
        if (!link_ec) {
            if (auto digest = linked_digest(m_node_dir, target)) {
                in_use.insert(*digest);
            }
        }
    }
    // A shim process still running from an older artifact (containerd runs it again to clean
    // up its container) keeps that artifact, whatever the generations say.
    in_use.merge(artifacts_in_use(artifacts_root(), proc));
    if (kept.size() != state.generations.size()) {
        state.generations = std::move(kept);
        TRY(save_state(state));
    }
    std::vector<std::string> removed;
    for (const std::string& digest : artifact_digests()) {
        if (in_use.contains(digest)) {
            continue;
        }
        TRY(util::create_directories(tmp_dir()));
        fs::path doomed = tmp_dir() / ("gc-" + digest);
        TRY(util::remove_all(doomed)); // a leftover of an interrupted collection
        if (::rename(artifact_dir(digest).c_str(), doomed.c_str()) != 0) {
            return std::unexpected(util::Error::from_errno(util::ErrorCode::io,
                                                           "cannot move unused artifact " +
                                                               artifact_dir(digest).string() +
                                                               " out of the store",
                                                           errno));
        }
        TRY(util::remove_all(doomed));
        removed.push_back(digest);
    }
    // Records about artifacts the store no longer holds would only grow: drop them.
    TRY(forget_stale_fingerprints(*this));
    TRY(forget_oci_resolutions(*this));
    return removed;
}

util::Expected<void> Store::clean_tmp(std::chrono::seconds older_than) const {
    std::error_code ec;
    fs::directory_iterator it(tmp_dir(), ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory) {
            return {};
        }
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot list " + tmp_dir().string(), ec.value()));
    }
    const std::time_t now = std::time(nullptr);
    for (const auto& entry : it) {
        struct stat info {};
        if (::lstat(entry.path().c_str(), &info) != 0) {
            continue; // vanished meanwhile
        }
        if (now - info.st_mtime >= older_than.count()) {
            TRY(util::remove_all(entry.path()));
        }
    }
    return {};
}

} // namespace shimkeeper::store
