// The pure check applied to every path named inside an archive before anything touches the disk.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>

namespace shimkeeper::archive {

// Normalises an archive entry path to "a/b/c" (no "./", no "//", no trailing "/"), or refuses it
// (ErrorCode::archive) when it is empty, absolute, climbs with "..", holds NUL or control
// characters, or is longer than Linux allows. A path naming the root itself ("." or "./")
// comes back as ".".
util::Expected<std::string> checked_entry_path(std::string_view raw);

// Checks a symlink's target for the link at `link_path` (already checked_entry_path'd): refuses
// absolute targets, targets that leave the extraction root when resolved from the link's own
// directory, and ".." anywhere but at the start (a ".." after a component could climb out through
// another symlink of the same archive). Returns the error message, empty when the target is safe.
std::string symlink_target_problem(std::string_view link_path, std::string_view target);

} // namespace shimkeeper::archive
