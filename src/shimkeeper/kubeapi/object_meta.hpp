// What every Kubernetes object carries in its metadata, read from its JSON as a list, a watch or
// a write returns it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace shimkeeper::kubeapi {

// metadata.name; "" when the object has none (never throws, whatever the JSON holds).
std::string name_of(const nlohmann::json& object);

} // namespace shimkeeper::kubeapi
