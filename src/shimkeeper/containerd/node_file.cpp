#include "shimkeeper/containerd/node_file.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/symlink_chain.hpp"

#include <cerrno>
#include <unistd.h>

namespace shimkeeper::containerd {

namespace fs = std::filesystem;

namespace {

util::Expected<std::optional<std::string>> read_optional(const fs::path& host_path) {
    auto text = util::read_file(host_path);
    if (!text) {
        if (text.error().code() == util::ErrorCode::not_found) {
            return std::optional<std::string>();
        }
        return std::unexpected(text.error());
    }
    return std::optional<std::string>(std::move(*text));
}

util::Expected<void> same_as_planned(const fs::path& node_path, const util::ResolvedPath& target,
                                     const std::optional<std::string>& current,
                                     const std::optional<std::string>& expected) {
    if (current == expected) {
        return {};
    }
    const std::string where = target.through.empty()
                                  ? node_path.string()
                                  : node_path.string() + " (-> " + target.node_path.string() + ")";
    return util::fail(util::ErrorCode::changed,
                      where + " changed on disk after shimkeeper read it (an edit by a person or "
                              "another tool); it was left as it is");
}

} // namespace

util::Expected<void> expect_unchanged(const util::HostRoot& root, const fs::path& node_path,
                                      const std::optional<std::string>& expected) {
    const util::ResolvedPath target = TRY(util::resolve_symlinks(root, node_path));
    return same_as_planned(node_path, target, TRY(read_optional(target.host_path)), expected);
}

util::Expected<std::optional<std::string>> read_node_file(const util::HostRoot& root,
                                                          const fs::path& node_path) {
    const util::ResolvedPath target = TRY(util::resolve_symlinks(root, node_path));
    return read_optional(target.host_path);
}

util::Expected<void> replace_node_file(const util::HostRoot& root, const fs::path& node_path,
                                       const std::optional<std::string>& expected,
                                       const std::optional<std::string>& after) {
    const util::ResolvedPath target = TRY(util::resolve_symlinks(root, node_path));
    const auto current = TRY(read_optional(target.host_path));
    if (current == after) {
        return {}; // already there: no write, the mtime stays
    }
    // The window between this read and the rename below is a few system calls; an edit landing
    // there is the one a compare-before-replace cannot see (no file lock is shared with editors).
    TRY(same_as_planned(node_path, target, current, expected));
    if (!after) {
        if (::unlink(target.host_path.c_str()) != 0) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot remove " + target.host_path.string(), errno));
        }
        return util::fsync_directory(target.host_path.parent_path());
    }
    TRY(util::create_directories(target.host_path.parent_path()));
    return util::write_file_atomic(target.host_path, *after, 0644);
}

} // namespace shimkeeper::containerd
