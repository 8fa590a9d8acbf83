// Artifacts that are not archives: a bare executable (ELF or script) downloaded as is, and the
// compressed-but-not-an-archive case that must be refused rather than run.
#pragma once

#include "shimkeeper/archive/budget.hpp"
#include "shimkeeper/archive/safe_tree.hpp"
#include "shimkeeper/archive/unpack.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace shimkeeper::archive {

// The first (up to) four bytes of the artifact.
util::Expected<std::string> read_magic(const std::filesystem::path& artifact);

// The compression filter libarchive recognises around the artifact ("gzip", "xz", ...), if any.
std::optional<std::string> compression_filter_of(const std::filesystem::path& artifact);

// Copies the artifact to <tree>/<bare_name> with mode 0755, within the budget.
util::Expected<UnpackResult> copy_bare_executable(const std::filesystem::path& artifact,
                                                  SafeTree& tree, const std::string& bare_name,
                                                  Budget& budget);

} // namespace shimkeeper::archive
