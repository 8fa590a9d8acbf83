// metav1.Condition lists as the API conventions want them: one entry per type (a map list keyed
// by type), lastTransitionTime moved only when the status changes (a new reason or message alone
// keeps it), observedGeneration the generation the condition was computed from. Pure: the caller
// passes the time, so an unchanged outcome yields a byte-identical list and no write.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

enum class ConditionStatus { true_, false_, unknown };

struct Condition {
    std::string type; // "Ready"
    ConditionStatus status = ConditionStatus::unknown;
    std::string reason;  // UpperCamelCase
    std::string message; // a sentence for `kubectl describe`
};

const char* to_string(ConditionStatus status); // "True", "False", "Unknown"

// `current` (a status.conditions list, or null) with each of `wanted` added or replaced in
// place; conditions of other types (another writer's) are kept as they are.
nlohmann::json merge_conditions(const nlohmann::json& current, const std::vector<Condition>& wanted,
                                std::int64_t generation, const std::string& now);

// The entry of `type` in a conditions list, or null.
const nlohmann::json* find_condition(const nlohmann::json& conditions, const std::string& type);

} // namespace shimkeeper::cluster::model
