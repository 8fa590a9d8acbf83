#include "shimkeeper/kubeapi/api_error.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::kubeapi {

ApiStatus parse_status(long http_code, std::string_view body) {
    ApiStatus status;
    status.http_code = http_code;
    auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_object() && json.value("kind", "") == "Status") {
        status.reason = json.value("reason", "");
        status.message = json.value("message", "");
        if (json.contains("code") && json["code"].is_number_integer()) {
            status.http_code = json["code"].get<long>();
        }
    }
    return status;
}

util::ErrorCode error_code_for(long http_code) {
    switch (http_code) {
    case 404:
        return util::ErrorCode::not_found;
    case 409:
        return util::ErrorCode::conflict;
    case 410:
        return util::ErrorCode::changed;
    case 401: // no valid credential: expired, revoked, or garbage
    case 403: // a credential the API server will not let do this
        return util::ErrorCode::refused;
    case 400:
    case 422:
        return util::ErrorCode::invalid_input;
    default:
        return util::ErrorCode::network;
    }
}

util::Error api_error(std::string_view method, std::string_view path, long http_code,
                      std::string_view body) {
    ApiStatus status = parse_status(http_code, body);
    std::string message = std::string(method) + " " + std::string(path) + ": ";
    if (!status.message.empty()) {
        message += status.message;
    } else if (!body.empty() && body.size() < 200) {
        message += std::string(body); // a proxy's plain-text answer
    } else {
        message += "no Status in the answer";
    }
    message += " (HTTP " + std::to_string(http_code);
    if (!status.reason.empty()) {
        message += " " + status.reason;
    }
    message += ")";
    if (http_code == 401) {
        // A 403 says itself what was not allowed (RBAC, NodeRestriction or a policy, in its
        // message); a 401 only says "Unauthorized", which reads better with the usual causes.
        message += ": the credential is expired, revoked or not one this API server accepts";
    }
    return util::Error(error_code_for(http_code), std::move(message));
}

} // namespace shimkeeper::kubeapi
