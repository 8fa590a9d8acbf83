#include "shimkeeper/cluster/model/overhead_tolerations.hpp"

#include "shimkeeper/cluster/model/label_grammar.hpp"
#include "shimkeeper/cluster/model/quantity.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

namespace shimkeeper::cluster::model {

using nlohmann::json;

namespace {

constexpr std::string_view k_hugepages_prefix = "hugepages-";
constexpr std::array<std::string_view, 3> k_standard_resources = {"cpu", "memory",
                                                                  "ephemeral-storage"};
constexpr std::array<std::string_view, 3> k_taint_effects = {"NoSchedule", "PreferNoSchedule",
                                                             "NoExecute"};

std::unexpected<FieldProblem> problem(std::string field, std::string what) {
    return std::unexpected(FieldProblem{std::move(field), std::move(what)});
}

// A quantity is a string ("250m") or a whole JSON number, as Kubernetes' Quantity reads it.
std::expected<Quantity, FieldProblem> quantity_in(const json& value, const std::string& field) {
    std::string text;
    if (value.is_string()) {
        text = value.get<std::string>();
    } else if (value.is_number_integer()) {
        text = value.dump();
    } else {
        return problem(field,
                       std::string("must be a quantity such as \"250m\" or \"160Mi\", not ") +
                           value.type_name());
    }
    auto quantity = Quantity::parse(text);
    if (!quantity) {
        return problem(field, quantity.error());
    }
    if (quantity->negative()) {
        return problem(field, "is \"" + text + "\": an overhead cannot be negative");
    }
    return *quantity;
}

// Extended resources (a prefix outside kubernetes.io) count whole devices.
bool is_extended_resource(std::string_view name) {
    return name.find('/') != std::string_view::npos &&
           name.find("kubernetes.io/") == std::string_view::npos;
}

std::expected<void, FieldProblem> check_resource(const std::string& name, const Quantity& amount,
                                                 const std::string& field) {
    if (name.find('/') == std::string::npos) {
        const bool standard = std::find(k_standard_resources.begin(), k_standard_resources.end(),
                                        name) != k_standard_resources.end();
        if (!standard && !name.starts_with(k_hugepages_prefix)) {
            return problem(field, "names no resource a pod's overhead can hold: give cpu, "
                                  "memory, ephemeral-storage, hugepages-<size> or a "
                                  "domain-prefixed extended resource such as example.com/gpu");
        }
    } else if (!is_label_key(name) || name.starts_with("requests.")) {
        return problem(field, "is not a resource name (a DNS subdomain, '/', and a name of at "
                              "most 63 letters, digits, '-', '_' or '.')");
    }
    if (is_extended_resource(name) && !amount.whole()) {
        return problem(field, "must be a whole number: an extended resource counts whole units");
    }
    if (name.starts_with(k_hugepages_prefix)) {
        auto page = Quantity::parse(std::string_view(name).substr(k_hugepages_prefix.size()));
        auto page_bytes = page ? page->whole_units() : std::unexpected(std::string());
        if (!page_bytes || *page_bytes == 0) {
            return problem(field, "names no page size after hugepages- (such as hugepages-2Mi)");
        }
        auto bytes = amount.whole_units();
        if (!bytes || *bytes % *page_bytes != 0) {
            return problem(field, "must be a whole number of " +
                                      name.substr(k_hugepages_prefix.size()) + " pages");
        }
    }
    return {};
}

std::expected<json, FieldProblem> pod_fixed_of(const json& runtime_class,
                                               const std::string& field) {
    auto overhead = runtime_class.find("overhead");
    if (overhead == runtime_class.end() || overhead->is_null()) {
        return json::object();
    }
    if (!overhead->is_object()) {
        return problem(field + ".overhead", "must be an object with podFixed");
    }
    auto pod_fixed = overhead->find("podFixed");
    if (pod_fixed == overhead->end() || pod_fixed->is_null()) {
        return json::object();
    }
    const std::string map_field = field + ".overhead.podFixed";
    if (!pod_fixed->is_object()) {
        return problem(map_field, "must be a map of resource name to quantity, such as "
                                  "{cpu: 250m, memory: 160Mi}");
    }
    for (const auto& [name, value] : pod_fixed->items()) {
        const std::string entry = map_field + "[" + name + "]";
        auto amount = quantity_in(value, entry);
        if (!amount) {
            return std::unexpected(std::move(amount).error());
        }
        if (auto checked = check_resource(name, *amount, entry); !checked) {
            return std::unexpected(std::move(checked).error());
        }
    }
    return *pod_fixed;
}

std::expected<std::string, FieldProblem> string_in(const json& toleration, const char* key,
                                                   const std::string& field) {
    auto found = toleration.find(key);
    if (found == toleration.end() || found->is_null()) {
        return std::string();
    }
    if (!found->is_string()) {
        return problem(field + "." + key,
                       std::string("must be a string, not ") + found->type_name());
    }
    return found->get<std::string>();
}

// One core/v1 Toleration, by the API server's rules for it, with only its known, non-empty fields.
std::expected<json, FieldProblem> toleration_of(const json& toleration, const std::string& field) {
    if (!toleration.is_object()) {
        return problem(field, "must be an object (key, operator, value, effect, "
                              "tolerationSeconds)");
    }
    json out = json::object();
    std::array<std::string, 4> parts; // key, operator, value, effect
    constexpr std::array<const char*, 4> k_names = {"key", "operator", "value", "effect"};
    for (std::size_t i = 0; i < parts.size(); ++i) {
        auto text = string_in(toleration, k_names[i], field);
        if (!text) {
            return std::unexpected(std::move(text).error());
        }
        parts[i] = std::move(*text);
        if (!parts[i].empty()) {
            out[k_names[i]] = parts[i];
        }
    }
    const auto& [key, op, value, effect] = parts;
    if (!key.empty() && !is_label_key(key)) {
        return problem(field + ".key", "is \"" + key +
                                           "\", not a taint key (a label key such as "
                                           "example.com/sandbox)");
    }
    if (!op.empty() && op != "Exists" && op != "Equal") {
        return problem(field + ".operator", "is \"" + op + "\": it must be Exists or Equal");
    }
    if (key.empty() && op != "Exists") {
        return problem(field + ".operator", "must be Exists when key is empty (an empty key "
                                            "with Exists tolerates every taint)");
    }
    if (op == "Exists" && !value.empty()) {
        return problem(field + ".value", "must be empty when operator is Exists (Exists "
                                         "tolerates the key whatever its value)");
    }
    if (!is_label_value(value)) {
        return problem(field + ".value", "is \"" + value +
                                             "\", not a taint value (at most 63 letters, digits, "
                                             "'-', '_' or '.')");
    }
    if (!effect.empty() && std::find(k_taint_effects.begin(), k_taint_effects.end(), effect) ==
                               k_taint_effects.end()) {
        return problem(field + ".effect", "is \"" + effect +
                                              "\": it must be NoSchedule, PreferNoSchedule or "
                                              "NoExecute (or left out for every effect)");
    }
    if (auto seconds = toleration.find("tolerationSeconds");
        seconds != toleration.end() && !seconds->is_null()) {
        if (!seconds->is_number_integer()) {
            return problem(field + ".tolerationSeconds", "must be a whole number of seconds");
        }
        if (effect != "NoExecute") {
            return problem(field + ".tolerationSeconds",
                           "applies only with effect NoExecute (how long a pod stays on a node "
                           "tainted NoExecute)");
        }
        out["tolerationSeconds"] = *seconds;
    }
    return out;
}

std::expected<json, FieldProblem> tolerations_of(const json& runtime_class,
                                                 const std::string& field) {
    auto tolerations = runtime_class.find("tolerations");
    if (tolerations == runtime_class.end() || tolerations->is_null()) {
        return json::array();
    }
    const std::string list_field = field + ".tolerations";
    if (!tolerations->is_array()) {
        return problem(list_field, "must be a list of tolerations");
    }
    json out = json::array();
    std::set<std::tuple<json, json, json, json>> seen;
    for (std::size_t i = 0; i < tolerations->size(); ++i) {
        const std::string entry = list_field + "[" + std::to_string(i) + "]";
        auto toleration = toleration_of((*tolerations)[i], entry);
        if (!toleration) {
            return std::unexpected(std::move(toleration).error());
        }
        const auto identity = std::make_tuple(
            toleration->value("key", json()), toleration->value("operator", json()),
            toleration->value("value", json()), toleration->value("effect", json()));
        if (!seen.insert(identity).second) {
            return problem(entry, "repeats an earlier toleration (the same key, operator, value "
                                  "and effect)");
        }
        out.push_back(std::move(*toleration));
    }
    return out;
}

} // namespace

std::expected<OverheadAndTolerations, FieldProblem>
overhead_and_tolerations_of(const json& runtime_class, const std::string& field) {
    OverheadAndTolerations out;
    auto pod_fixed = pod_fixed_of(runtime_class, field);
    if (!pod_fixed) {
        return std::unexpected(std::move(pod_fixed).error());
    }
    out.pod_fixed = std::move(*pod_fixed);
    auto tolerations = tolerations_of(runtime_class, field);
    if (!tolerations) {
        return std::unexpected(std::move(tolerations).error());
    }
    out.tolerations = std::move(*tolerations);
    return out;
}

bool same_pod_fixed(const json& left, const json& right) {
    if (!left.is_object() || !right.is_object() || left.size() != right.size()) {
        return false;
    }
    for (const auto& [name, value] : left.items()) {
        auto other = right.find(name);
        if (other == right.end()) {
            return false;
        }
        auto mine = quantity_in(value, name);
        auto theirs = quantity_in(*other, name);
        if (!mine || !theirs || !(*mine == *theirs)) {
            return false;
        }
    }
    return true;
}

} // namespace shimkeeper::cluster::model
