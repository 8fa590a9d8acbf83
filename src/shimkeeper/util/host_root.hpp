// Every host path goes through a HostRoot: `--root DIR` (bake, tests) prefixes what we touch,
// while paths written into files that the node reads (containerd's config, symlinks) stay the
// node's own paths, without the prefix.
#pragma once

#include <filesystem>

namespace shimkeeper::util {

class HostRoot {
public:
    HostRoot() = default; // "/": the real node
    explicit HostRoot(std::filesystem::path root) : m_root(std::move(root)) {}

    // Where this process finds a node path: "/etc/x" -> "<root>/etc/x".
    std::filesystem::path on_host(const std::filesystem::path& node_path) const {
        if (m_root.empty() || m_root == "/") {
            return node_path;
        }
        return m_root / node_path.relative_path();
    }

    // The node path of a host path under the root: "<root>/etc/x" -> "/etc/x".
    std::filesystem::path to_node(const std::filesystem::path& host_path) const {
        if (m_root.empty() || m_root == "/") {
            return host_path;
        }
        return std::filesystem::path("/") / host_path.lexically_relative(m_root);
    }

    const std::filesystem::path& root() const { return m_root; }
    bool is_host() const { return m_root.empty() || m_root == "/"; }

private:
    std::filesystem::path m_root;
};

} // namespace shimkeeper::util
