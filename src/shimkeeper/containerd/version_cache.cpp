#include "shimkeeper/containerd/version_cache.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <string>
#include <sys/stat.h>

namespace shimkeeper::containerd {

namespace {

// "<dev> <ino> <size> <mtime sec>.<nsec> <path>": changes whenever the binary is replaced.
std::optional<std::string> identity_of(const std::filesystem::path& binary) {
    struct stat info {};
    if (::stat(binary.c_str(), &info) != 0) {
        return std::nullopt;
    }
    return std::to_string(info.st_dev) + " " + std::to_string(info.st_ino) + " " +
           std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec) + "." +
           std::to_string(info.st_mtim.tv_nsec) + " " + binary.string();
}

} // namespace

util::Expected<ContainerdVersion>
cached_containerd_version(const std::filesystem::path& binary,
                          const std::filesystem::path& cache_file) {
    const auto identity = identity_of(binary);
    if (cache_file.empty() || !identity) {
        return query_containerd_version(binary);
    }
    // The file holds two lines: the identity, then the version.
    if (auto cached = util::read_file(cache_file)) {
        const auto newline = cached->find('\n');
        if (newline != std::string::npos && cached->substr(0, newline) == *identity) {
            if (auto version = parse_containerd_version(cached->substr(newline + 1))) {
                return *version;
            }
        }
    }
    auto version = TRY(query_containerd_version(binary));
    if (util::create_directories(cache_file.parent_path())) {
        (void)util::write_file_atomic(cache_file, *identity + "\n" + version.to_string() + "\n");
    }
    return version;
}

} // namespace shimkeeper::containerd
