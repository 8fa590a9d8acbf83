// Reading and replacing a file of containerd's configuration as the node sees it: through its
// symlink chain (the link stays a link; its target is edited in its own directory), and never
// over an edit shimkeeper did not plan for.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace shimkeeper::containerd {

// The file's bytes at the end of its symlink chain; nullopt when it does not exist.
util::Expected<std::optional<std::string>> read_node_file(const util::HostRoot& root,
                                                          const std::filesystem::path& node_path);

// Fails (ErrorCode::changed, naming the file) unless the file holds `expected` (nullopt: absent).
util::Expected<void> expect_unchanged(const util::HostRoot& root,
                                      const std::filesystem::path& node_path,
                                      const std::optional<std::string>& expected);

// Compare before replace: `expected` is what the plan was made from (nullopt: absent). Right
// before the atomic rename the file is read again; if it differs, nothing is written and the
// error (ErrorCode::changed) names the file. `after` nullopt removes the file.
util::Expected<void> replace_node_file(const util::HostRoot& root,
                                       const std::filesystem::path& node_path,
                                       const std::optional<std::string>& expected,
                                       const std::optional<std::string>& after);

} // namespace shimkeeper::containerd
