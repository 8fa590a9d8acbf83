// Which kind of fetch a Shim's spec.fetchStrategy asks for, and from which of its fields.
//
// `type` is optional: runtime-class-manager deprecated it and its samples leave it out, because
// the source already says it (anonHttp or platforms: anonymous HTTP; oci: OCI). When a Shim
// gives both, they must agree; the CRD refuses a disagreement at admission, and a node checks
// again because it never trusts that the cluster runs the schema it ships.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace shimkeeper::cluster::model {

enum class FetchType { anonymous_http, oci };

struct FetchStrategyForm {
    FetchType type = FetchType::anonymous_http;
    // The one source field given: "anonHttp", "oci" or "platforms".
    std::string source;
    // Why this type, for messages: "spec.fetchStrategy.type is \"oci\"", or that there is no
    // type and what the source means.
    std::string reason;
};

// The form of spec.fetchStrategy (`strategy`, an object): exactly one source, and the type it
// and `type` (when given: anonymousHttp, the proposal's annonymousHttp, or oci) agree on.
// platforms takes the written type, anonymous HTTP without one. Errors start with `object`
// ("Shim/spin-v2: spec.fetchStrategy ...") and name the fields and values that disagree.
util::Expected<FetchStrategyForm> fetch_strategy_form(const nlohmann::json& strategy,
                                                      const std::string& object);

} // namespace shimkeeper::cluster::model
