// The node half of `status`: what containerd setup was detected and why, what the running
// containerd reports against the desired handlers, and the last transaction.
#pragma once

#include "shimkeeper/cli/context.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

// Never fails: whatever cannot be read is reported as such in the result.
// `desired`: the shims whose handlers are checked against the running containerd; when it is
// `DesiredKnown::yes`, the removals it asks for that pods still block are listed too.
enum class DesiredKnown { yes, no };
nlohmann::json node_status(const Context& ctx, const std::vector<spec::ShimSpec>& desired,
                           DesiredKnown known);
void print_node_status(const nlohmann::json& status);

} // namespace shimkeeper::cli
