// Small filesystem helpers that report failures as Error instead of throwing.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <string>

namespace shimkeeper::util {

Expected<std::string> read_file(const std::filesystem::path& path);
Expected<void> create_directories(const std::filesystem::path& dir);
// Removes a file or a whole tree; a missing path is not an error.
Expected<void> remove_all(const std::filesystem::path& path);
// A fresh directory "<parent>/<prefix>XXXXXX".
Expected<std::filesystem::path> make_temp_dir(const std::filesystem::path& parent,
                                              const std::string& prefix);

} // namespace shimkeeper::util
