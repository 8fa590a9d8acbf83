#include "shimkeeper/cluster/model/fetch_type.hpp"

#include <array>
#include <optional>
#include <vector>

namespace shimkeeper::cluster::model {

namespace {

using nlohmann::json;

constexpr std::array<const char*, 3> k_sources = {"anonHttp", "oci", "platforms"};

const char* name_of(FetchType type) {
    return type == FetchType::oci ? "oci" : "anonymousHttp";
}

// The type a source field says by itself; platforms serves either type and says none.
std::optional<FetchType> type_said_by(const std::string& source) {
    if (source == "anonHttp") {
        return FetchType::anonymous_http;
    }
    if (source == "oci") {
        return FetchType::oci;
    }
    return std::nullopt;
}

bool has(const json& strategy, const char* key) {
    auto it = strategy.find(key);
    return it != strategy.end() && !it->is_null();
}

} // namespace

util::Expected<FetchStrategyForm> fetch_strategy_form(const json& strategy,
                                                      const std::string& object) {
    const auto bad = [&](const std::string& field, const std::string& what) {
        return util::fail(util::ErrorCode::invalid_input, object + ": " + field + " " + what);
    };
    std::vector<std::string> sources;
    for (const char* key : k_sources) {
        if (has(strategy, key)) {
            sources.emplace_back(key);
        }
    }
    if (sources.empty()) {
        return bad("spec.fetchStrategy",
                   "has no source: give anonHttp (one URL for every node), oci (one OCI "
                   "reference for every node) or platforms (one per architecture); type alone "
                   "says how to fetch, not what");
    }
    if (sources.size() > 1) {
        std::string names;
        for (const auto& source : sources) {
            names += (names.empty() ? "" : " and ") + source;
        }
        return bad("spec.fetchStrategy", "gives " + names +
                                             ": it needs exactly one of anonHttp or oci (one "
                                             "source) or platforms (one per architecture)");
    }
    FetchStrategyForm form;
    form.source = sources.front();
    const std::optional<FetchType> said = type_said_by(form.source);

    std::optional<std::string> written;
    if (has(strategy, "type")) {
        if (!strategy["type"].is_string()) {
            return bad("spec.fetchStrategy.type",
                       std::string("must be a string, not ") + strategy["type"].type_name());
        }
        written = strategy["type"].get<std::string>();
    }
    if (!written) {
        form.type = said.value_or(FetchType::anonymous_http);
        form.reason =
            "spec.fetchStrategy has no type, and " + form.source + " means " + name_of(form.type);
        return form;
    }
    // The proposal behind the CRD spells it both ways.
    if (*written == "anonymousHttp" || *written == "annonymousHttp") {
        form.type = FetchType::anonymous_http;
    } else if (*written == "oci") {
        form.type = FetchType::oci;
    } else {
        return bad("spec.fetchStrategy.type", "is \"" + *written +
                                                  "\"; this node knows anonymousHttp and oci "
                                                  "(or leave type out: the source says it)");
    }
    if (said && *said != form.type) {
        return bad("spec.fetchStrategy.type", "is \"" + *written + "\" but spec.fetchStrategy." +
                                                  form.source + " is an " + name_of(*said) +
                                                  " source: they must agree (or leave type "
                                                  "out: the source says it)");
    }
    form.reason = "spec.fetchStrategy.type is \"" + *written + "\"";
    return form;
}

} // namespace shimkeeper::cluster::model
