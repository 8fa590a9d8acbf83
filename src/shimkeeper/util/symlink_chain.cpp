#include "shimkeeper/util/symlink_chain.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace shimkeeper::util {

namespace fs = std::filesystem;

namespace {

constexpr int k_max_links = 40; // the kernel's own limit for one lookup

// `dir / target` for a relative target, lexically; false when ".." climbs above "/" (the result
// then stops at "/", as the kernel's lookup does).
bool join_below_root(const fs::path& dir, const fs::path& target, fs::path& out) {
    std::vector<fs::path> parts;
    for (const fs::path& part : dir.relative_path()) {
        parts.push_back(part);
    }
    bool below = true;
    for (const fs::path& part : target) {
        if (part == "..") {
            if (parts.empty()) {
                below = false;
                continue;
            }
            parts.pop_back();
        } else if (part != "." && !part.empty()) {
            parts.push_back(part);
        }
    }
    out = "/";
    for (const fs::path& part : parts) {
        out /= part;
    }
    return below;
}

} // namespace

Expected<ResolvedPath> resolve_symlinks(const HostRoot& root, const fs::path& node_path) {
    ResolvedPath resolved{node_path.lexically_normal(), {}, {}};
    for (int hops = 0;; ++hops) {
        resolved.host_path = root.on_host(resolved.node_path);
        struct stat info {};
        if (::lstat(resolved.host_path.c_str(), &info) != 0) {
            if (errno == ENOENT) {
                return resolved;
            }
            return std::unexpected(Error::from_errno(
                ErrorCode::io, "cannot inspect " + resolved.host_path.string(), errno));
        }
        if (!S_ISLNK(info.st_mode)) {
            return resolved;
        }
        const bool seen = std::find(resolved.through.begin(), resolved.through.end(),
                                    resolved.node_path) != resolved.through.end();
        if (seen || hops >= k_max_links) {
            return fail(ErrorCode::conflict,
                        node_path.string() + " is a symlink loop (through " +
                            resolved.node_path.string() +
                            "); point the link at a real file or set [containerd] config_path");
        }
        std::error_code ec;
        const fs::path target = fs::read_symlink(resolved.host_path, ec);
        if (ec) {
            return std::unexpected(Error::from_errno(
                ErrorCode::io, "cannot read the symlink " + resolved.host_path.string(),
                ec.value()));
        }
        resolved.through.push_back(resolved.node_path);
        if (target.is_absolute()) {
            resolved.node_path = target.lexically_normal();
            continue;
        }
        fs::path next;
        if (!join_below_root(resolved.node_path.parent_path(), target, next) && !root.is_host()) {
            return fail(ErrorCode::conflict, resolved.node_path.string() + " links to " +
                                                 target.string() + ", outside the root " +
                                                 root.root().string());
        }
        resolved.node_path = next;
    }
}

} // namespace shimkeeper::util
