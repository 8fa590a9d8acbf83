#include "shimkeeper/containerd/write.hpp"

#include "shimkeeper/containerd/node_file.hpp"
#include "shimkeeper/util/symlink_chain.hpp"

#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/containerd/program.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fd.hpp"
#include "shimkeeper/util/fs.hpp"

#include <cerrno>
#include <cstdlib>
#include <unistd.h>

namespace shimkeeper::containerd {

namespace fs = std::filesystem;
using util::Error;
using util::ErrorCode;

namespace {

// A temp file that is removed when it goes out of scope.
class ScratchFile {
public:
    static util::Expected<ScratchFile> create(const fs::path& dir, std::string_view content) {
        std::string pattern = (dir / ".shimkeeper-check-XXXXXX.toml").string();
        util::Fd fd(::mkstemps(pattern.data(), 5));
        if (!fd) {
            return std::unexpected(Error::from_errno(
                ErrorCode::io, "cannot create a candidate config in " + dir.string(), errno));
        }
        ScratchFile file{fs::path(pattern)};
        for (std::string_view left = content; !left.empty();) {
            ssize_t n = ::write(fd.get(), left.data(), left.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                return std::unexpected(
                    Error::from_errno(ErrorCode::io, "cannot write " + pattern, errno));
            }
            left.remove_prefix(static_cast<std::size_t>(n));
        }
        return file;
    }
    ScratchFile(ScratchFile&& other) noexcept : m_path(std::exchange(other.m_path, {})) {}
    ScratchFile& operator=(ScratchFile&&) = delete;
    ~ScratchFile() {
        if (!m_path.empty()) {
            ::unlink(m_path.c_str());
        }
    }
    const fs::path& path() const { return m_path; }

private:
    explicit ScratchFile(fs::path path) : m_path(std::move(path)) {}
    fs::path m_path;
};

fs::path backup_path(const fs::path& backup_dir, const fs::path& node_path) {
    return backup_dir / "containerd" / node_path.relative_path();
}

} // namespace

util::Expected<Prevalidation> prevalidate(const Detection& detection, const FileChange& change,
                                          const util::HostRoot& root) {
    if (!change.after) {
        return Prevalidation{false, "the file is removed; nothing to check"};
    }
    if (detection.masking == Masking::go_template) {
        return Prevalidation{false, change.node_path.string() + " is a template that only " +
                                        std::string(to_string(detection.flavor)) +
                                        " can render; checked as TOML with template lines masked"};
    }
    if (detection.binary.empty()) {
        return Prevalidation{false, "no containerd binary to run `config dump`"};
    }
    // Beside the file the link leads to, so that its relative imports resolve the same.
    fs::path dir = TRY(util::resolve_symlinks(root, change.node_path)).host_path.parent_path();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        dir = fs::temp_directory_path();
    }
    auto candidate = TRY(ScratchFile::create(dir, *change.after));
    std::string binary = root.on_host(detection.binary).string();
    auto result = TRY(run_program({binary, "--config", candidate.path().string(), "config", "dump"},
                                  std::chrono::seconds(30)));
    if (result.exit_code != 0) {
        return util::fail(ErrorCode::external,
                          "containerd rejects the edited " + change.node_path.string() +
                              " (`containerd --config <candidate> config dump` exited " +
                              std::to_string(result.exit_code) +
                              "); nothing was written: " + result.output);
    }
    return Prevalidation{true, "containerd " + binary + " config dump accepts it"};
}

util::Expected<void> write_change(const FileChange& change, const util::HostRoot& root) {
    return replace_node_file(root, change.node_path, change.before, change.after);
}

util::Expected<void> keep_previous(const FileChange& change, const fs::path& backup_dir) {
    fs::path path = backup_path(backup_dir, change.node_path);
    TRY(util::create_directories(path.parent_path()));
    if (change.before) {
        return util::write_file_atomic(path, *change.before, 0600);
    }
    return util::write_file_atomic(path.string() + ".absent", "", 0600);
}

util::Expected<FileChange> restore_previous(const fs::path& node_path, const fs::path& backup_dir,
                                            const util::HostRoot& root) {
    FileChange change;
    change.node_path = node_path;
    change.before = TRY(read_node_file(root, node_path));
    fs::path path = backup_path(backup_dir, node_path);
    auto saved = util::read_file(path);
    if (saved) {
        change.after = std::move(*saved);
    } else if (!fs::exists(path.string() + ".absent")) {
        return util::fail(ErrorCode::not_found, "no saved copy of " + node_path.string() + " in " +
                                                    backup_dir.string() +
                                                    "; the generation cannot be restored");
    }
    change.created_by_shimkeeper =
        created_base_hash(split_lines(change.after.value_or(change.before.value_or(""))))
            .has_value();
    return change;
}

} // namespace shimkeeper::containerd
