// [shim.fetch]: one url + sha256 for every node, or one [[shim.fetch.platform]] entry per
// architecture of which this node's is chosen. Every entry is validated, not just the chosen
// one, so that a file accepted on one node is accepted on all.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/spec/table_reader.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>

namespace shimkeeper::spec {

enum class Unverified { refuse, allow };

// `fetch` is the [shim.fetch] table; `arch` this node's normalised architecture.
util::Expected<FetchSource> parse_fetch(const TableReader& fetch, const std::string& arch,
                                        Unverified unverified);

} // namespace shimkeeper::spec
