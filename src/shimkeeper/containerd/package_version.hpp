// The containerd version of an image root that is not running, read from its package database
// instead of running its binary (which may be for another architecture, and must not start
// anything while an image is built). Debian's dpkg status file is plain text and cheap to read;
// an rpm database (Berkeley DB / sqlite / ndb, depending on the distribution) is not, so rpm
// roots need `bake --containerd-version`.
#pragma once

#include "shimkeeper/containerd/version.hpp"
#include "shimkeeper/util/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::containerd {

struct PackagedContainerd {
    std::string package; // containerd (Debian) or containerd.io (Docker's repository)
    std::string version; // as dpkg records it, e.g. "1.6.20~ds1-1+deb12u1"
    ContainerdVersion parsed;
};

// The installed `containerd` or `containerd.io` stanza of a dpkg status file's text (`file` names
// it in errors). nullopt: neither is installed. An installed one whose Version holds no X.Y.Z is
// an Error naming the file, the package and the version.
util::Expected<std::optional<PackagedContainerd>> dpkg_containerd(std::string_view status_text,
                                                                  const std::string& file);

} // namespace shimkeeper::containerd
