#include "shimkeeper/store/running_binaries.hpp"

#include <algorithm>
#include <cctype>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_deleted = " (deleted)"; // the kernel's mark on an unlinked exe

bool is_pid(const std::string& name) {
    return !name.empty() &&
           std::ranges::all_of(name, [](unsigned char c) { return std::isdigit(c) != 0; });
}

} // namespace

std::set<std::string> artifacts_in_use(const fs::path& artifacts_root, const fs::path& proc) {
    std::set<std::string> digests;
    std::error_code ec;
    // /proc shows the resolved path: compare with the store's own resolved path.
    const fs::path root = fs::weakly_canonical(artifacts_root, ec);
    if (ec) {
        return digests;
    }
    for (const auto& entry : fs::directory_iterator(proc, ec)) {
        if (!is_pid(entry.path().filename().string())) {
            continue;
        }
        std::error_code link_ec;
        std::string exe = fs::read_symlink(entry.path() / "exe", link_ec).string();
        if (link_ec) {
            continue; // a kernel thread, a process that just ended, or not ours to read
        }
        if (exe.ends_with(k_deleted)) {
            exe.resize(exe.size() - k_deleted.size());
        }
        fs::path relative = fs::path(exe).lexically_relative(root);
        if (!relative.empty() && *relative.begin() != ".." && *relative.begin() != ".") {
            digests.insert(relative.begin()->string());
        }
    }
    return digests;
}

} // namespace shimkeeper::store
