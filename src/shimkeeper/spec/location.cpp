#include "shimkeeper/spec/shim_spec.hpp"

namespace shimkeeper::spec {

std::string Location::to_string() const {
    if (line == 0) {
        return file; // an origin without a position: a stored generation, a cluster object
    }
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

} // namespace shimkeeper::spec

namespace shimkeeper::spec {

std::string FetchSource::display() const {
    return oci.empty() ? url : "oci://" + oci;
}

} // namespace shimkeeper::spec
