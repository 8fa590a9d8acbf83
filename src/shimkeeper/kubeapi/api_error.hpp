// An API server answer other than 2xx, as an Error: the API's own Status message (what kubectl
// prints) when the body is a Status, the HTTP code and reason always. The HTTP code also picks
// the ErrorCode, so callers can branch without parsing text:
//   404 -> not_found, 409 -> conflict (Conflict on update, AlreadyExists on create),
//   410 -> changed (resourceVersion too old), 401/403 -> refused (the credential: expired,
//   revoked, or without the right), 400/422 -> invalid_input, others -> network.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>

namespace shimkeeper::kubeapi {

struct ApiStatus {
    long http_code = 0;
    std::string reason;  // Status.reason: "Conflict", "AlreadyExists", "Forbidden", "Expired"...
    std::string message; // Status.message; empty when the body was not a Status
};

// Reads a Status body (from a response or a watch ERROR event's object).
ApiStatus parse_status(long http_code, std::string_view body);

util::ErrorCode error_code_for(long http_code);

// "PATCH /api/v1/nodes/b: nodes \"b\" is forbidden: ... (HTTP 403 Forbidden)"
util::Error api_error(std::string_view method, std::string_view path, long http_code,
                      std::string_view body);

} // namespace shimkeeper::kubeapi
