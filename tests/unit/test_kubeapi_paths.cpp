// REST paths, query encoding, and Status bodies turned into Errors.
#include "shimkeeper/kubeapi/api_error.hpp"
#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/util/base64.hpp"

#include <gtest/gtest.h>

namespace {
namespace kubeapi_paths {

using namespace shimkeeper::kubeapi;
using shimkeeper::util::decode_base64;
using shimkeeper::util::ErrorCode;

TEST(KubePaths, CoreClusterScoped) {
    EXPECT_EQ(collection_path(nodes_resource(), "").value(), "/api/v1/nodes");
    EXPECT_EQ(object_path(nodes_resource(), "", "node-a").value(), "/api/v1/nodes/node-a");
    EXPECT_EQ(object_path(nodes_resource(), "", "node-a", "status").value(),
              "/api/v1/nodes/node-a/status");
}

TEST(KubePaths, GroupClusterScoped) {
    EXPECT_EQ(object_path(runtime_classes_resource(), "", "spin").value(),
              "/apis/node.k8s.io/v1/runtimeclasses/spin");
}

TEST(KubePaths, CoreNamespaced) {
    EXPECT_EQ(object_path(config_maps_resource(), "ns1", "cm").value(),
              "/api/v1/namespaces/ns1/configmaps/cm");
    // No namespace: the list across all namespaces.
    EXPECT_EQ(collection_path(config_maps_resource(), "").value(), "/api/v1/configmaps");
}

TEST(KubePaths, GroupNamespaced) {
    EXPECT_EQ(object_path(leases_resource(), "shimkeeper-system", "coordinator").value(),
              "/apis/coordination.k8s.io/v1/namespaces/shimkeeper-system/leases/coordinator");
    EXPECT_EQ(leases_resource().api_version(), "coordination.k8s.io/v1");
    EXPECT_EQ(nodes_resource().api_version(), "v1");
}

TEST(KubePaths, Refusals) {
    auto with_ns = collection_path(nodes_resource(), "default");
    ASSERT_FALSE(with_ns);
    EXPECT_NE(with_ns.error().message().find("cluster-scoped"), std::string::npos);
    auto without_ns = object_path(leases_resource(), "", "x");
    ASSERT_FALSE(without_ns);
    EXPECT_NE(without_ns.error().message().find("needs a namespace"), std::string::npos);
    EXPECT_FALSE(object_path(nodes_resource(), "", ""));
}

TEST(KubePaths, QueryIsEncoded) {
    EXPECT_EQ(to_query({}), "");
    EXPECT_EQ(to_query({{"labelSelector", "a=b,c in (d)"}, {"limit", "5"}}),
              "?labelSelector=a%3Db%2Cc%20in%20%28d%29&limit=5");
    EXPECT_EQ(percent_encode("metadata.name=node-a"), "metadata.name%3Dnode-a");
}

TEST(KubeStatus, MessageAndCodeFromStatus) {
    std::string body = R"({"kind":"Status","apiVersion":"v1","status":"Failure",
        "message":"nodes \"node-b\" is forbidden: node \"node-a\" is not allowed to modify node \"node-b\"",
        "reason":"Forbidden","code":403})";
    auto error = api_error("PATCH", "/api/v1/nodes/node-b", 403, body);
    EXPECT_EQ(error.code(), ErrorCode::refused);
    EXPECT_EQ(error.message(), "PATCH /api/v1/nodes/node-b: nodes \"node-b\" is forbidden: node "
                               "\"node-a\" is not allowed to modify node \"node-b\" (HTTP 403 "
                               "Forbidden)");
}

TEST(KubeStatus, CodesMapToErrorCodes) {
    EXPECT_EQ(api_error("PUT", "/x", 409, "{}").code(), ErrorCode::conflict);
    EXPECT_EQ(api_error("GET", "/x", 404, "").code(), ErrorCode::not_found);
    EXPECT_EQ(api_error("GET", "/x", 410, "").code(), ErrorCode::changed);
    EXPECT_EQ(api_error("GET", "/x", 503, "").code(), ErrorCode::network);
    EXPECT_EQ(api_error("POST", "/x", 400, "").code(), ErrorCode::invalid_input);
    EXPECT_EQ(api_error("PATCH", "/x", 422, "").code(), ErrorCode::invalid_input);
}

// An expired, revoked or garbage token (401) and a credential without the right (403)
// are a refusal the agent rides out on its last reading, not bad input that stops its files.
TEST(KubeStatus, ARefusedCredentialIsRefusedNotBadInput) {
    const std::string unauthorized =
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized",
            "reason":"Unauthorized","code":401})";
    auto error = api_error("GET", "/api/v1/nodes/node-a", 401, unauthorized);
    EXPECT_EQ(error.code(), ErrorCode::refused);
    EXPECT_EQ(error.message(),
              "GET /api/v1/nodes/node-a: Unauthorized (HTTP 401 Unauthorized): the "
              "credential is expired, revoked or not one this API server accepts");
    EXPECT_EQ(api_error("GET", "/x", 403, "").code(), ErrorCode::refused);
    EXPECT_EQ(error_code_for(401), ErrorCode::refused);
    EXPECT_EQ(error_code_for(403), ErrorCode::refused);
    EXPECT_STREQ(shimkeeper::util::to_string(ErrorCode::refused), "refused by the API server");
}

TEST(KubeStatus, PlainTextBody) {
    auto error = api_error("GET", "/x", 502, "Bad Gateway");
    EXPECT_EQ(error.message(), "GET /x: Bad Gateway (HTTP 502)");
}

TEST(KubeStatus, WatchErrorObject) {
    auto status = parse_status(200, R"j({"kind":"Status","code":410,"reason":"Expired",
        "message":"too old resource version: 1 (5)"})j");
    EXPECT_EQ(status.http_code, 410);
    EXPECT_EQ(status.reason, "Expired");
}

TEST(KubeBase64, Decodes) {
    EXPECT_EQ(decode_base64("aGVsbG8=").value(), "hello");
    EXPECT_EQ(decode_base64("aGVs\nbG8h").value(), "hello!");
    EXPECT_FALSE(decode_base64("aGVsbG8"));  // not a multiple of 4
    EXPECT_FALSE(decode_base64("aGV*bG8h")); // not the alphabet
    EXPECT_FALSE(decode_base64("aG==bG8h")); // data after padding
}

} // namespace kubeapi_paths
} // namespace
