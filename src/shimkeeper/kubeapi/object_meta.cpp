#include "shimkeeper/kubeapi/object_meta.hpp"

namespace shimkeeper::kubeapi {

std::string name_of(const nlohmann::json& object) {
    return object.value(nlohmann::json::json_pointer("/metadata/name"), std::string());
}

} // namespace shimkeeper::kubeapi
