#include "shimkeeper/cluster/model/runtime_class.hpp"

#include "shimkeeper/cluster/model/label_grammar.hpp"
#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/overhead_tolerations.hpp"

#include <regex>

namespace shimkeeper::cluster::model {

using nlohmann::json;

namespace {

// The API server's rules for a RuntimeClass (IsDNS1123Label for the handler,
// IsDNS1123Subdomain for the name); the node's own name grammar is wider.
std::optional<std::string> api_problem(const ShimIdentity& identity) {
    static const std::regex k_label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    static const std::regex k_subdomain(
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    if (identity.handler.size() > 63 || !std::regex_match(identity.handler, k_label)) {
        return "handler " + identity.handler +
               " cannot be a RuntimeClass handler (the API wants a DNS label: lowercase letters, "
               "digits and '-'); choose spec.handler accordingly";
    }
    if (identity.runtime_class.size() > 253 ||
        !std::regex_match(identity.runtime_class, k_subdomain)) {
        return "\"" + identity.runtime_class +
               "\" cannot name a RuntimeClass (the API wants a DNS subdomain: no '_'); set "
               "spec.runtimeClass.name";
    }
    return std::nullopt;
}

// The API server validates a RuntimeClass's nodeSelector as labels; the Shim's CRD checks only
// that each value is a string of at most 63 characters.
std::optional<std::string> selector_problem(const json& selector,
                                            const std::string& readiness_key) {
    for (const auto& [key, value] : selector.items()) {
        if (key == readiness_key) {
            continue; // ours, not the Shim's spec
        }
        if (!value.is_string()) {
            return "spec.nodeSelector." + key + " is " + value.dump() +
                   ", not a string: a RuntimeClass cannot select on it; give it a string value";
        }
        const std::string text = value.get<std::string>();
        if (!is_label_key(key) || !is_label_value(text)) {
            return "spec.nodeSelector " + key + "=" + text +
                   " is not a valid label (the API wants a qualified name as key and at most 63 "
                   "letters, digits, '-', '_' or '.' as value): a RuntimeClass cannot select on "
                   "it, nor can a Node carry it";
        }
    }
    return std::nullopt;
}

// "pool=b, zone=x", the labels the RuntimeClass selects on beside the readiness label.
std::string selector_text(const json& selector, const std::string& readiness_key) {
    std::string out;
    for (const auto& [key, value] : selector.items()) {
        if (key == readiness_key) {
            continue;
        }
        out += (out.empty() ? "" : ", ") + key + "=" +
               (value.is_string() ? value.get<std::string>() : value.dump());
    }
    return out;
}

} // namespace

json runtime_class_node_selector(const ShimIdentity& identity, const json& shim) {
    json selector = json::object();
    const json* spec = shim.contains("spec") ? &shim["spec"] : nullptr;
    if (spec != nullptr && spec->is_object() && spec->contains("nodeSelector") &&
        (*spec)["nodeSelector"].is_object()) {
        selector = (*spec)["nodeSelector"];
    }
    selector[shim_node_key(identity.name)] = identity.handler;
    return selector;
}

json desired_runtime_class(const ShimIdentity& identity, const json& shim) {
    const json metadata = shim.value("metadata", json::object());
    json owner = {{"apiVersion", shim.value("apiVersion", "containerd.x-k8s.io/v1alpha1")},
                  {"kind", "Shim"},
                  {"name", identity.name},
                  {"uid", metadata.value("uid", "")},
                  {"controller", true}};
    json scheduling = {{"nodeSelector", runtime_class_node_selector(identity, shim)}};
    const OverheadAndTolerations& extras = identity.overhead_tolerations;
    if (!extras.tolerations.empty()) {
        scheduling["tolerations"] = extras.tolerations;
    }
    json runtime_class = {{"apiVersion", "node.k8s.io/v1"},
                          {"kind", "RuntimeClass"},
                          {"metadata",
                           {{"name", identity.runtime_class},
                            {"labels", {{k_managed_by_label, k_managed_by_value}}},
                            {"annotations", {{k_shim_annotation, identity.name}}},
                            {"ownerReferences", json::array({owner})}}},
                          {"handler", identity.handler},
                          {"scheduling", std::move(scheduling)}};
    if (!extras.pod_fixed.empty()) {
        runtime_class["overhead"] = {{"podFixed", extras.pod_fixed}};
    }
    return runtime_class;
}

std::string runtime_class_owner(const json& runtime_class) {
    const json metadata = runtime_class.value("metadata", json::object());
    const json labels = metadata.value("labels", json::object());
    if (labels.value(k_managed_by_label, "") != k_managed_by_value) {
        return "";
    }
    return metadata.value("annotations", json::object()).value(k_shim_annotation, "");
}

RuntimeClassPlan plan_runtime_class(const json* existing, const json& desired,
                                    const ShimIdentity& identity) {
    const std::string& name = identity.runtime_class;
    if (auto problem = api_problem(identity)) {
        return {RuntimeClassPlan::Action::invalid,
                {},
                {"RuntimeClassReady", ConditionStatus::false_, "InvalidSpec", *problem}};
    }
    const std::string readiness_key = shim_node_key(identity.name);
    const json selector = desired.value(json::json_pointer("/scheduling/nodeSelector"), json());
    if (auto problem =
            selector.is_object() ? selector_problem(selector, readiness_key) : std::nullopt) {
        return {RuntimeClassPlan::Action::invalid,
                {},
                {"RuntimeClassReady", ConditionStatus::false_, "InvalidSpec", *problem}};
    }
    const std::string also = selector.is_object() ? selector_text(selector, readiness_key) : "";
    const Condition ready{"RuntimeClassReady", ConditionStatus::true_, "Ready",
                          "RuntimeClass " + name + " (handler " + identity.handler +
                              ") schedules onto nodes labelled " + readiness_key + "=" +
                              identity.handler + (also.empty() ? "" : " and " + also)};
    if (existing == nullptr) {
        return {RuntimeClassPlan::Action::create, {}, ready};
    }
    const std::string owner = runtime_class_owner(*existing);
    if (owner != identity.name) {
        std::string whose =
            owner.empty() ? "was not created by shimkeeper" : "belongs to Shim " + owner;
        return {RuntimeClassPlan::Action::conflict,
                {},
                {"RuntimeClassReady", ConditionStatus::false_, "Conflict",
                 "RuntimeClass " + name + " exists and " + whose + " (handler " +
                     existing->value("handler", "") +
                     "); shimkeeper leaves it alone: delete it, or set spec.runtimeClass.name "
                     "to another name"}};
    }
    if (existing->value("handler", "") != desired["handler"].get<std::string>()) {
        return {RuntimeClassPlan::Action::replace, {}, ready};
    }
    json operations = json::array();
    const json& metadata = (*existing)["metadata"];
    if (existing->value("scheduling", json()) != desired["scheduling"]) {
        operations.push_back(
            {{"op", "add"}, {"path", "/scheduling"}, {"value", desired["scheduling"]}});
    }
    const json::json_pointer pod_fixed("/overhead/podFixed");
    if (!same_pod_fixed(existing->value(pod_fixed, json::object()),
                        desired.value(pod_fixed, json::object()))) {
        operations.push_back(
            desired.contains("overhead")
                ? json{{"op", "add"}, {"path", "/overhead"}, {"value", desired["overhead"]}}
                : json{{"op", "remove"}, {"path", "/overhead"}});
    }
    if (metadata.value("ownerReferences", json()) != desired["metadata"]["ownerReferences"]) {
        operations.push_back({{"op", "add"},
                              {"path", "/metadata/ownerReferences"},
                              {"value", desired["metadata"]["ownerReferences"]}});
    }
    if (operations.empty()) {
        return {RuntimeClassPlan::Action::keep, {}, ready};
    }
    return {RuntimeClassPlan::Action::patch, std::move(operations), ready};
}

} // namespace shimkeeper::cluster::model
