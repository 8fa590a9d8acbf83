// `containerd --version` costs ~25 ms (a Go binary starting up) on every apply, most of a no-op
// apply's budget. Its answer changes only when the binary does, so it is remembered per binary
// identity (device, inode, size, mtime) in a small file in the store's state folder.
#pragma once

#include "shimkeeper/containerd/version.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>

namespace shimkeeper::containerd {

// Like query_containerd_version; an empty cache_file disables the cache. A cache that cannot be
// read or written is ignored (it is only an optimisation).
util::Expected<ContainerdVersion>
cached_containerd_version(const std::filesystem::path& binary,
                          const std::filesystem::path& cache_file);

} // namespace shimkeeper::containerd
