#include "shimkeeper/cluster/model/rollout_policy.hpp"

#include <charconv>

namespace shimkeeper::cluster::model {

namespace {

using nlohmann::json;

util::Error bad(const json& shim, const std::string& what) {
    const std::string name = shim.value(json::json_pointer("/metadata/name"), std::string("?"));
    return util::Error(util::ErrorCode::invalid_input, "Shim/" + name + ": " + what);
}

} // namespace

util::Expected<RolloutPolicy> rollout_policy_of(const json& shim) {
    RolloutPolicy policy;
    const json::json_pointer where("/spec/rolloutStrategy");
    if (!shim.contains(where)) {
        return policy; // recreate: every selected node at once
    }
    const json& strategy = shim.at(where);
    if (!strategy.is_object()) {
        return std::unexpected(bad(shim, "spec.rolloutStrategy must be an object"));
    }
    const std::string type = strategy.value("type", std::string("rolling"));
    if (type == "recreate") {
        if (strategy.contains("rolling")) {
            return std::unexpected(
                bad(shim, "spec.rolloutStrategy.rolling applies only with type: rolling"));
        }
        return policy;
    }
    if (type != "rolling") {
        return std::unexpected(bad(shim, "spec.rolloutStrategy.type must be rolling or recreate, "
                                         "not '" +
                                             type + "'"));
    }
    policy.rolling = true;
    const json::json_pointer max_update("/rolling/maxUpdate");
    if (!strategy.contains(max_update)) {
        return policy;
    }
    const json& value = strategy.at(max_update);
    const std::string must = "spec.rolloutStrategy.rolling.maxUpdate must be a number of nodes "
                             "(at least 1) or a percentage from 1% to 100%";
    if (value.is_number_integer()) {
        const auto count = value.get<long long>();
        if (count < 1 || count > 1'000'000) {
            return std::unexpected(bad(shim, must + ", not " + value.dump()));
        }
        policy.max_update = static_cast<int>(count);
        return policy;
    }
    if (value.is_string()) {
        const std::string text = value.get<std::string>();
        int percent = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, percent);
        if (ec == std::errc() && ptr + 1 == end && *ptr == '%' && text[0] != '0' && percent >= 1 &&
            percent <= 100) {
            policy.percent = percent;
            return policy;
        }
    }
    return std::unexpected(bad(shim, must + ", not " + value.dump()));
}

int resolve_slots(const RolloutPolicy& policy, int selected) {
    if (!policy.percent) {
        return policy.max_update;
    }
    const long long rounded_up = (static_cast<long long>(selected) * *policy.percent + 99) / 100;
    return static_cast<int>(std::max(1LL, rounded_up));
}

std::optional<int> slots_for_node(const RolloutPolicy& policy, const json& shim) {
    if (!policy.percent) {
        return policy.max_update;
    }
    // A count resolved for another generation is not this one's (an edit from 100% to 25% would
    // be judged with the old count): the status must have observed the Shim's generation.
    const long generation = shim.value(json::json_pointer("/metadata/generation"), 0L);
    const long observed = shim.value(json::json_pointer("/status/observedGeneration"), -1L);
    if (observed != generation) {
        return std::nullopt;
    }
    const json::json_pointer where("/status/slots");
    if (shim.contains(where) && shim.at(where).is_number_integer() &&
        shim.at(where).get<long long>() >= 1) {
        return static_cast<int>(std::min(shim.at(where).get<long long>(), 1'000'000LL));
    }
    return std::nullopt;
}

} // namespace shimkeeper::cluster::model
