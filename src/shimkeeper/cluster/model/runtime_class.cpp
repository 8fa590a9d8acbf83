#include "shimkeeper/cluster/model/runtime_class.hpp"

#include "shimkeeper/cluster/model/node_shim_state.hpp"

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

} // namespace

json desired_runtime_class(const ShimIdentity& identity, const json& shim) {
    const json metadata = shim.value("metadata", json::object());
    json owner = {{"apiVersion", shim.value("apiVersion", "containerd.x-k8s.io/v1alpha1")},
                  {"kind", "Shim"},
                  {"name", identity.name},
                  {"uid", metadata.value("uid", "")},
                  {"controller", true}};
    return {{"apiVersion", "node.k8s.io/v1"},
            {"kind", "RuntimeClass"},
            {"metadata",
             {{"name", identity.runtime_class},
              {"labels", {{k_managed_by_label, k_managed_by_value}}},
              {"annotations", {{k_shim_annotation, identity.name}}},
              {"ownerReferences", json::array({owner})}}},
            {"handler", identity.handler},
            {"scheduling", {{"nodeSelector", {{shim_node_key(identity.name), identity.handler}}}}}};
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
    const Condition ready{"RuntimeClassReady", ConditionStatus::true_, "Ready",
                          "RuntimeClass " + name + " (handler " + identity.handler +
                              ") schedules onto nodes labelled " + shim_node_key(identity.name) +
                              "=" + identity.handler};
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
    if (existing->value("handler", "") != desired["handler"]) {
        return {RuntimeClassPlan::Action::replace, {}, ready};
    }
    json operations = json::array();
    const json& metadata = (*existing)["metadata"];
    if (existing->value("scheduling", json()) != desired["scheduling"]) {
        operations.push_back(
            {{"op", "add"}, {"path", "/scheduling"}, {"value", desired["scheduling"]}});
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
