// Where the unit tests find their fixtures: the source tree.
#pragma once

#include <filesystem>

namespace shimkeeper::testing {

// SHIMKEEPER_SOURCE_DIR when set (ctest sets it for scripts), else the tree the build was
// configured from.
std::filesystem::path source_dir();

} // namespace shimkeeper::testing
