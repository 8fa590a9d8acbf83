// One [[shim]] table to a ShimSpec: every key checked against its grammar, defaults derived,
// the fetch source chosen for this node's architecture.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>
#include <toml++/toml.h>

namespace shimkeeper::spec {

util::Expected<ShimSpec> parse_shim(const toml::table& shim, const std::string& file,
                                    const std::string& arch);

} // namespace shimkeeper::spec
