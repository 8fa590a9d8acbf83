// How plan and status show an OCI source: the reference and path, and what this node resolved
// it to on the last fetch (store/oci_record.hpp): the index, the platform's manifest, the layer
// and the file's digest. Nothing is asked of the registry here.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/store.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shimkeeper::cli {

// null for a URL source.
nlohmann::json oci_source_json(const spec::FetchSource& source, const store::Store& store);

// Indented lines for text output; none for a URL source.
std::vector<std::string> oci_source_lines(const spec::FetchSource& source,
                                          const store::Store& store);

} // namespace shimkeeper::cli
