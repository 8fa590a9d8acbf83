#include "shimkeeper/kubeapi/self_identity.hpp"

#include <algorithm>

namespace shimkeeper::kubeapi {

namespace {

using nlohmann::json;

std::vector<std::string> strings_at(const json& object, const std::string& key) {
    std::vector<std::string> out;
    if (!object.is_object() || !object.contains(key) || !object[key].is_array()) {
        return out;
    }
    for (const json& item : object[key]) {
        if (item.is_string()) {
            out.push_back(item.get<std::string>());
        }
    }
    return out;
}

} // namespace

SelfIdentity self_identity_of(const json& user_info) {
    SelfIdentity out;
    if (!user_info.is_object()) {
        return out;
    }
    out.username = user_info.value("username", std::string());
    const std::string prefix = "system:node:";
    const auto groups = strings_at(user_info, "groups");
    if (out.username.starts_with(prefix) && out.username.size() > prefix.size() &&
        std::ranges::find(groups, "system:nodes") != groups.end()) {
        out.node_name = out.username.substr(prefix.size());
        out.how = "the kubelet identity " + out.username;
        return out;
    }
    // Exactly one value: a list of several would leave the policies' [0] and ours to disagree.
    const auto bound = user_info.contains("extra")
                           ? strings_at(user_info["extra"], k_node_name_extra)
                           : std::vector<std::string>{};
    if (bound.size() == 1 && !bound.front().empty()) {
        out.node_name = bound.front();
        out.how = "a token of " + out.username + " bound to Node " + out.node_name;
    }
    return out;
}

util::Expected<SelfIdentity> review_self(Client& client) {
    const json review = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
    auto answer = client.call(Method::post, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                              review.dump(), "application/json");
    if (!answer) {
        return std::unexpected(std::move(answer.error())
                                   .with_context("asking the API server who this credential is "
                                                 "(SelfSubjectReview)"));
    }
    return self_identity_of(answer->value(json::json_pointer("/status/userInfo"), json::object()));
}

} // namespace shimkeeper::kubeapi
