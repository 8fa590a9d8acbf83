// Decoding CRI Status answers: conditions, and the handlers of info["config"] in the shape
// containerd 1.6.20 really writes (keys checked against a running containerd: runtimeType,
// runtimePath under containerd.runtimes).
#include "shimkeeper/health/cri_status.hpp"
#include "shimkeeper/health/proto/cri.pb.h"

#include <gtest/gtest.h>

namespace {
namespace health_cri_status {

using namespace shimkeeper::health;

// Trimmed from a real containerd 1.6.20 answer, keys and shapes unchanged.
const char* const k_config_json = R"({
  "containerd": {
    "snapshotter": "overlayfs", "defaultRuntimeName": "runc",
    "runtimes": {
      "runc": {"runtimeType": "io.containerd.runc.v2", "runtimePath": "", "options": {"SystemdCgroup": false}},
      "spin": {"runtimeType": "/var/lib/shimkeeper/bin/containerd-shim-spin-v2", "runtimePath": "", "options": null},
      "wasm": {"runtimeType": "io.containerd.wasm.v2", "runtimePath": "/opt/wasm/shim", "options": null}
    }
  },
  "cni": {"binDir": "/opt/cni/bin"}, "sandboxImage": "registry.k8s.io/pause:3.6"
})";

std::string status_response(bool runtime_ready, bool network_ready, const std::string& config) {
    runtime::v1::StatusResponse response;
    auto* ready = response.mutable_status()->add_conditions();
    ready->set_type("RuntimeReady");
    ready->set_status(runtime_ready);
    auto* network = response.mutable_status()->add_conditions();
    network->set_type("NetworkReady");
    network->set_status(network_ready);
    network->set_reason("NetworkPluginNotReady");
    (*response.mutable_info())["config"] = config;
    (*response.mutable_info())["golang"] = "\"go1.19.8\"";
    return response.SerializeAsString();
}

TEST(CriStatus, ReadsConditionsAndHandlers) {
    const auto status = parse_cri_status(status_response(true, false, k_config_json));
    ASSERT_TRUE(status) << status.error().message();
    EXPECT_TRUE(status->runtime_ready);
    EXPECT_FALSE(status->network_ready);
    EXPECT_EQ(status->conditions,
              (std::map<std::string, bool>{{"NetworkReady", false}, {"RuntimeReady", true}}));
    const std::vector<RuntimeHandlerInfo> expected = {
        {"runc", "io.containerd.runc.v2", ""},
        {"spin", "/var/lib/shimkeeper/bin/containerd-shim-spin-v2", ""},
        {"wasm", "io.containerd.wasm.v2", "/opt/wasm/shim"},
    };
    EXPECT_EQ(status->handlers, expected);
    EXPECT_EQ(status->raw_config_json, k_config_json);
}

TEST(CriStatus, Containerd2RuntimeHandlersListAddsNamesMissingFromConfig) {
    runtime::v1::StatusResponse response;
    (*response.mutable_info())["config"] =
        R"({"containerd": {"runtimes": {"runc": {"runtimeType": "io.containerd.runc.v2"}}}})";
    response.add_runtime_handlers()->set_name("");
    response.add_runtime_handlers()->set_name("runc");
    response.add_runtime_handlers()->set_name("kata");
    const auto status = parse_cri_status(response.SerializeAsString());
    ASSERT_TRUE(status) << status.error().message();
    ASSERT_EQ(status->handlers.size(), 2u);
    EXPECT_EQ(status->handlers[0], (RuntimeHandlerInfo{"kata", "", ""}));
    EXPECT_EQ(status->handlers[1].name, "runc");
    EXPECT_FALSE(status->runtime_ready); // no condition reported at all
}

TEST(CriStatus, WithoutConfigTheAnswerCannotBeChecked) {
    runtime::v1::StatusResponse response;
    response.mutable_status()->add_conditions()->set_type("RuntimeReady");
    const auto status = parse_cri_status(response.SerializeAsString());
    ASSERT_FALSE(status);
    EXPECT_NE(status.error().message().find("verbose=true"), std::string::npos);
}

TEST(CriStatus, GarbageBytesAreRejected) {
    const auto status = parse_cri_status("\xff\xff\xff\xff");
    ASSERT_FALSE(status);
    EXPECT_NE(status.error().message().find("not a valid runtime.v1.StatusResponse"),
              std::string::npos);
}

TEST(CriConfigRuntimes, RejectsShapesItCannotCheck) {
    EXPECT_FALSE(parse_cri_config_runtimes("not json"));
    EXPECT_FALSE(parse_cri_config_runtimes("[]"));
    EXPECT_FALSE(parse_cri_config_runtimes(R"({"cni": {}})"));
    EXPECT_FALSE(parse_cri_config_runtimes(R"({"containerd": {"runtimes": []}})"));
    EXPECT_FALSE(parse_cri_config_runtimes(R"({"containerd": {"runtimes": {"x": 1}}})"));
    const auto none = parse_cri_config_runtimes(R"({"containerd": {"runtimes": null}})");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
}

} // namespace health_cri_status
} // namespace
