#include "shimkeeper/cluster/model/shim_rollup.hpp"

#include "shimkeeper/cluster/model/pool_confinement.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"

#include <algorithm>

namespace shimkeeper::cluster::model {

using nlohmann::json;

namespace {

constexpr std::size_t k_named = 5; // a message names this many nodes at most

std::string names_text(const std::vector<std::string>& names) {
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < k_named; ++i) {
        text += (i == 0 ? "" : ", ") + names[i];
    }
    if (names.size() > k_named) {
        text += " and " + std::to_string(names.size() - k_named) + " more";
    }
    return text;
}

// What a node carrying the shim says about it, for a deleting Shim's status.
std::string said_by(const ShimReport& on_node) {
    if (!on_node.state) {
        return on_node.annotated ? "an annotation shimkeeper cannot read" : "label only";
    }
    std::string said = to_string(*on_node.state);
    return on_node.reason.empty() ? said : said + ": " + on_node.reason;
}

std::string of_selected(int count, const Rollup& rollup) {
    return std::to_string(count) + " of " + std::to_string(rollup.counts.selected) +
           " selected nodes";
}

std::string no_node_text(const json& shim) {
    bool has_selector = shim.contains("spec") && shim["spec"].contains("nodeSelector");
    return has_selector ? "no Node matches spec.nodeSelector"
                        : "no Node without the label node-role.kubernetes.io/control-plane "
                          "(the default when spec.nodeSelector is absent)";
}

std::vector<Condition> deleting_conditions(const Rollup& rollup) {
    if (rollup.carrying.empty()) {
        return {{"Ready", ConditionStatus::false_, "Deleting",
                 "the Shim is being deleted; no node carries it any more"},
                {"Progressing", ConditionStatus::false_, "Uninstalled",
                 "no node carries the shim any more"}};
    }
    const std::string carrying = "still carried (label or annotation) by " +
                                 std::to_string(rollup.carrying.size()) +
                                 " node(s): " + names_text(rollup.carrying_said);
    return {
        {"Ready", ConditionStatus::false_, "Deleting", "the Shim is being deleted; " + carrying},
        {"Progressing", ConditionStatus::true_, "Uninstalling", "the shim is " + carrying}};
}

// What the installed nodes derived from their artifacts, for a Shim that leaves the runtime type
// to them: the type when they agree (no count in the text, so that it does not change as nodes
// install), or each type with its nodes when they do not.
void add_derived_runtime_type(json& fields, const Rollup& rollup) {
    if (rollup.runtime_types.empty() || !fields.contains("runtimeTypeFrom")) {
        return;
    }
    const std::string from = fields["runtimeTypeFrom"].get<std::string>();
    if (rollup.runtime_types.size() == 1) {
        const std::string& type = rollup.runtime_types.begin()->first;
        fields["runtimeType"] = type;
        fields["runtimeTypeFrom"] =
            from + "; every node installed at this generation derived " + type;
        return;
    }
    std::string said;
    for (const auto& [type, names] : rollup.runtime_types) {
        said += (said.empty() ? "" : "; ") + type + " on " + names_text(names);
    }
    fields["runtimeTypeFrom"] = from +
                                "; the installed nodes derived different runtime types "
                                "(their artifacts differ): " +
                                said;
}

} // namespace

Rollup rollup(const json& shim, const NodeViews& nodes,
              const std::map<std::string, std::string>& write_refusals) {
    const json metadata = shim.value("metadata", json::object());
    const std::string name = metadata.value("name", "");
    Rollup out;
    out.generation = metadata.value("generation", std::int64_t{0});
    const auto identity = shim_identity_of(shim);
    const std::string handler = identity ? identity->handler : std::string();
    for (const auto& [node_name, node] : nodes) {
        const ShimReport on_node = shim_on_node(node, name);
        if (on_node.carries()) {
            out.carrying.push_back(node_name);
            out.carrying_said.push_back(node_name + " (" + said_by(on_node) + ")");
        }
        if (!selects_node(shim, node.labels)) {
            continue;
        }
        ++out.counts.selected;
        if (!handler.empty() && on_node.installed_at(out.generation, handler)) {
            ++out.counts.installed;
            if (!on_node.runtime_type.empty()) {
                out.runtime_types[on_node.runtime_type].push_back(node_name);
            }
        } else if (on_node.failed_at(out.generation)) {
            ++out.counts.failed;
            out.failures.push_back(
                on_node.reason.empty() ? node_name : node_name + " (" + on_node.reason + ")");
        } else {
            ++out.counts.updating;
            std::string refused;
            const SlotRequests requests = slot_requests_on(node);
            if (const auto asked = requests.find(name); asked != requests.end()) {
                refused = asked->second.refused;
            }
            if (auto said = write_refusals.find(node_name); said != write_refusals.end()) {
                refused += (refused.empty() ? "" : "; ") + said->second;
            }
            if (!refused.empty()) {
                out.refused.push_back(node_name + " (" + refused + ")");
            }
        }
    }
    return out;
}

std::vector<Condition> node_conditions(const json& shim, const Rollup& rollup) {
    if (shim.value("metadata", json::object()).contains("deletionTimestamp")) {
        return deleting_conditions(rollup);
    }
    const NodeCounts& counts = rollup.counts;
    const std::string generation = "generation " + std::to_string(rollup.generation);
    if (counts.selected == 0) {
        return {{"Ready", ConditionStatus::false_, "NoNodesSelected", no_node_text(shim)},
                {"Progressing", ConditionStatus::false_, "NoNodesSelected", no_node_text(shim)}};
    }
    Condition ready{"Ready", ConditionStatus::false_, "Installing",
                    of_selected(counts.installed, rollup) + " run " + generation};
    if (counts.installed == counts.selected) {
        ready = {"Ready", ConditionStatus::true_, "Installed",
                 "all " + std::to_string(counts.selected) + " selected nodes run " + generation};
    } else if (counts.failed > 0) {
        ready = {"Ready", ConditionStatus::false_, "InstallFailed",
                 of_selected(counts.failed, rollup) + " failed at " + generation + ": " +
                     names_text(rollup.failures)};
    }
    Condition progressing{"Progressing", ConditionStatus::false_, "Complete",
                          "every selected node runs " + generation};
    if (counts.updating > 0) {
        progressing = {"Progressing", ConditionStatus::true_, "Updating",
                       of_selected(counts.updating, rollup) + " have not reached " + generation +
                           " yet"};
        if (!rollup.refused.empty()) {
            progressing.reason = "Refused";
            progressing.message += "; the API server refuses requests " +
                                   std::to_string(rollup.refused.size()) +
                                   " of them need to take part: " + names_text(rollup.refused);
        }
    } else if (counts.failed > 0) {
        progressing = {"Progressing", ConditionStatus::false_, "InstallFailed",
                       "no node is still on its way; " + of_selected(counts.failed, rollup) +
                           " failed"};
    }
    return {ready, progressing};
}

json desired_status(const json& shim, const Rollup& rollup,
                    const std::optional<Condition>& runtime_class, const std::string& now) {
    const json current = shim.value("status", json::object());
    std::vector<Condition> wanted = node_conditions(shim, rollup);
    if (runtime_class) {
        wanted.push_back(*runtime_class);
    }
    wanted.push_back(pool_confinement(shim));
    const NodeCounts& counts = rollup.counts;
    json status{{"observedGeneration", rollup.generation},
                {"nodes",
                 {{"selected", counts.selected},
                  {"installed", counts.installed},
                  {"failed", counts.failed},
                  {"updating", counts.updating}}},
                {"conditions", merge_conditions(current.value("conditions", json::array()), wanted,
                                                rollup.generation, now)}};
    json fields = spec_status_fields(shim);
    if (!fields.contains("runtimeType")) {
        add_derived_runtime_type(fields, rollup);
    }
    if (!fields.contains("runtimeType") && current.contains("runtimeType")) {
        fields["runtimeType"] = nullptr; // no one type to show: a merge patch deletes it
    }
    status.update(fields);
    return status;
}

namespace {

// Whether any field `desired` names is absent from `current` or different there.
bool fields_differ(const json& current, const json& desired) {
    for (const auto& [key, value] : desired.items()) {
        auto found = current.find(key);
        if (found == current.end() || *found != value) {
            return true;
        }
    }
    return false;
}

json without_progress(json status) {
    if (!status.is_object()) {
        return status;
    }
    status.erase("nodes");
    auto conditions = status.find("conditions");
    if (conditions != status.end() && conditions->is_array()) {
        for (json& entry : *conditions) {
            if (entry.is_object()) {
                entry.erase("message");
            }
        }
    }
    return status;
}

} // namespace

bool status_differs(const json& shim, const json& desired) {
    return fields_differ(shim.value("status", json::object()), desired);
}

bool status_differs_beyond_progress(const json& shim, const json& desired) {
    return fields_differ(without_progress(shim.value("status", json::object())),
                         without_progress(desired));
}

int progress_step(const json& status) {
    const json nodes = status.is_object() ? status.value("nodes", json::object()) : json::object();
    if (!nodes.is_object()) {
        return 0;
    }
    const auto count = [&](const char* key) {
        const auto found = nodes.find(key);
        return found != nodes.end() && found->is_number_integer() ? found->get<std::int64_t>() : 0;
    };
    const std::int64_t selected = count("selected");
    if (selected <= 0) {
        return 0;
    }
    const std::int64_t done =
        std::clamp<std::int64_t>(count("installed") + count("failed"), 0, selected);
    return static_cast<int>(done * k_progress_steps / selected);
}

bool progress_reached_another_step(const json& shim, const json& desired) {
    const json current = shim.value("status", json::object());
    if (!current.is_object() || current.value("nodes", json()) == desired.value("nodes", json())) {
        return true; // the counts did not move: a message alone
    }
    // No node on its way: not a rollout's progress but the fleet changing (a Node deleted or
    // relabelled), rare, and written as it comes.
    const json nodes = desired.value("nodes", json::object());
    if (!nodes.is_object() || nodes.value("updating", 0) == 0) {
        return true;
    }
    return progress_step(current) != progress_step(desired);
}

} // namespace shimkeeper::cluster::model
