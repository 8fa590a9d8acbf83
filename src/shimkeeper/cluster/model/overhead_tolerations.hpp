// What a Shim's runtimeClass says for the RuntimeClass beyond its name and handler: the fixed
// overhead a pod of this runtime costs (overhead.podFixed: a sandboxed runtime's VM or kernel
// is paid for by every pod, beyond what its containers ask) and the tolerations its pods get
// (scheduling.tolerations: a pool of such nodes is often tainted). Copied into the RuntimeClass as
// written, nothing added, after the API server's own rules for a RuntimeClass, so that a Shim
// the CRD let through (an older CRD, a hand-made object) is refused with the field named instead
// of a RuntimeClass the API server refuses on every pass.
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <string>

namespace shimkeeper::cluster::model {

struct OverheadAndTolerations {
    nlohmann::json pod_fixed = nlohmann::json::object();  // resource name → quantity as written
    nlohmann::json tolerations = nlohmann::json::array(); // known fields only, empty ones left out
};

struct FieldProblem {
    std::string field; // "spec.runtimeClass.tolerations[0].operator"
    std::string what;  // "is \"Lt\": ..."
};

// runtime_class: spec.runtimeClass (or runtimeclass) of a Shim, spelt `field` in messages.
std::expected<OverheadAndTolerations, FieldProblem>
overhead_and_tolerations_of(const nlohmann::json& runtime_class, const std::string& field);

// Whether two overhead.podFixed maps hold the same amounts, however each is spelt ("0.5" and
// "500m"): the API server keeps its own spelling.
bool same_pod_fixed(const nlohmann::json& left, const nlohmann::json& right);

} // namespace shimkeeper::cluster::model
