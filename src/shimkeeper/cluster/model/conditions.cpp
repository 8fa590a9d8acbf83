#include "shimkeeper/cluster/model/conditions.hpp"

namespace shimkeeper::cluster::model {

using nlohmann::json;

const char* to_string(ConditionStatus status) {
    switch (status) {
    case ConditionStatus::true_:
        return "True";
    case ConditionStatus::false_:
        return "False";
    case ConditionStatus::unknown:
        break;
    }
    return "Unknown";
}

const json* find_condition(const json& conditions, const std::string& type) {
    if (!conditions.is_array()) {
        return nullptr;
    }
    for (const json& entry : conditions) {
        if (entry.is_object() && entry.value("type", "") == type) {
            return &entry;
        }
    }
    return nullptr;
}

json merge_conditions(const json& current, const std::vector<Condition>& wanted,
                      std::int64_t generation, const std::string& now) {
    json out = current.is_array() ? current : json::array();
    for (const Condition& condition : wanted) {
        json entry = {{"type", condition.type},           {"status", to_string(condition.status)},
                      {"observedGeneration", generation}, {"lastTransitionTime", now},
                      {"reason", condition.reason},       {"message", condition.message}};
        json* existing = nullptr;
        for (json& item : out) {
            if (item.is_object() && item.value("type", "") == condition.type) {
                existing = &item;
            }
        }
        if (existing == nullptr) {
            out.push_back(std::move(entry));
            continue;
        }
        if (existing->value("status", "") == entry["status"].get<std::string>() &&
            existing->contains("lastTransitionTime")) {
            entry["lastTransitionTime"] = (*existing)["lastTransitionTime"];
        }
        *existing = std::move(entry);
    }
    return out;
}

} // namespace shimkeeper::cluster::model
