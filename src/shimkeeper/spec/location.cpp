#include "shimkeeper/spec/shim_spec.hpp"

namespace shimkeeper::spec {

std::string Location::to_string() const {
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

} // namespace shimkeeper::spec
