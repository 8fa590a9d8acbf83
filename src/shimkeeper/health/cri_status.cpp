#include "shimkeeper/health/cri_status.hpp"

#include "shimkeeper/health/proto/cri.pb.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace shimkeeper::health {

namespace {

std::string string_field(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string()) {
        return {};
    }
    return it->get<std::string>();
}

} // namespace

util::Expected<std::vector<RuntimeHandlerInfo>> parse_cri_config_runtimes(std::string_view json) {
    nlohmann::json config = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded() || !config.is_object()) {
        return util::fail(util::ErrorCode::external,
                          "CRI Status info[\"config\"] is not a JSON object; containerd's answer "
                          "cannot be checked");
    }
    const auto containerd = config.find("containerd");
    if (containerd == config.end() || !containerd->is_object()) {
        return util::fail(util::ErrorCode::external,
                          "CRI Status info[\"config\"] has no \"containerd\" object; this "
                          "containerd version reports its CRI config in an unknown shape");
    }
    std::vector<RuntimeHandlerInfo> handlers;
    const auto runtimes = containerd->find("runtimes");
    if (runtimes == containerd->end() || runtimes->is_null()) {
        return handlers;
    }
    if (!runtimes->is_object()) {
        return util::fail(util::ErrorCode::external,
                          "CRI Status info[\"config\"]: containerd.runtimes is not an object");
    }
    for (const auto& [name, runtime] : runtimes->items()) {
        if (!runtime.is_object()) {
            return util::fail(util::ErrorCode::external, "CRI Status info[\"config\"]: runtime \"" +
                                                             name + "\" is not an object");
        }
        handlers.push_back(
            {name, string_field(runtime, "runtimeType"), string_field(runtime, "runtimePath")});
    }
    std::ranges::sort(handlers, {}, &RuntimeHandlerInfo::name);
    return handlers;
}

util::Expected<CriStatus> parse_cri_status(std::string_view serialized_response) {
    runtime::v1::StatusResponse response;
    if (!response.ParseFromArray(serialized_response.data(),
                                 static_cast<int>(serialized_response.size()))) {
        return util::fail(util::ErrorCode::external,
                          "CRI Status answer is not a valid runtime.v1.StatusResponse");
    }
    CriStatus status;
    for (const auto& condition : response.status().conditions()) {
        status.conditions[condition.type()] = condition.status();
    }
    const auto condition_true = [&](const char* type) {
        const auto it = status.conditions.find(type);
        return it != status.conditions.end() && it->second;
    };
    status.runtime_ready = condition_true("RuntimeReady");
    status.network_ready = condition_true("NetworkReady");

    const auto config = response.info().find("config");
    if (config == response.info().end()) {
        return util::fail(util::ErrorCode::external,
                          "CRI Status answer has no info[\"config\"]; was it asked with "
                          "verbose=true?");
    }
    status.raw_config_json = config->second;
    status.handlers = TRY(parse_cri_config_runtimes(status.raw_config_json));

    // containerd 2.x also lists handler names; one missing from the config JSON still counts.
    for (const auto& handler : response.runtime_handlers()) {
        if (handler.name().empty()) {
            continue; // the default handler, listed under its own name in the config
        }
        const bool known = std::ranges::any_of(
            status.handlers, [&](const auto& info) { return info.name == handler.name(); });
        if (!known) {
            status.handlers.push_back({handler.name(), {}, {}});
        }
    }
    std::ranges::sort(status.handlers, {}, &RuntimeHandlerInfo::name);
    return status;
}

} // namespace shimkeeper::health
