// A unified diff of one planned file change, as `shimkeeper plan` prints it.
#pragma once

#include "shimkeeper/containerd/plan.hpp"

#include <string>

namespace shimkeeper::containerd {

// "--- a<path>" / "+++ b<path>" headers ("/dev/null" for an absent side), hunks with three lines
// of context. Line endings are shown without "\r". Empty when before equals after.
std::string unified_diff(const FileChange& change);

} // namespace shimkeeper::containerd
