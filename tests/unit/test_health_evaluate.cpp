// The health verdict after a change, one rule at a time, with the reason an operator reads.
#include "shimkeeper/health/evaluate.hpp"

#include <gtest/gtest.h>

namespace {
namespace health_evaluate {

using namespace shimkeeper;
using namespace shimkeeper::health;

const std::string k_spin = "/var/lib/shimkeeper/bin/containerd-shim-spin-v2";

CriStatus healthy_status() {
    CriStatus status;
    status.runtime_ready = true;
    status.conditions = {{"RuntimeReady", true}, {"NetworkReady", false}};
    status.handlers = {{"runc", "io.containerd.runc.v2", ""},
                       {"spin", k_spin, ""},
                       {"wasm", "io.containerd.wasm.v2", "/opt/wasm/shim"}};
    return status;
}

HealthExpectation expectation() {
    HealthExpectation expected;
    expected.handlers = {{"spin", k_spin}, {"wasm", "/opt/wasm/shim"}};
    expected.must_keep = {"runc"};
    expected.conditions_before = {{"RuntimeReady", true}, {"NetworkReady", false}};
    return expected;
}

const util::Expected<std::string> k_version = std::string("1.6.20~ds1");

TEST(HealthEvaluate, HealthyWhenEveryRuleHolds) {
    const HealthReport report = evaluate(expectation(), k_version, healthy_status());
    EXPECT_TRUE(report.healthy) << report.reason;
    EXPECT_EQ(report.reason, "containerd 1.6.20~ds1 healthy: RuntimeReady, 3 runtime handlers");
}

TEST(HealthEvaluate, NetworkReadyFalseBeforeAndAfterIsFine) {
    // No CNI on the node: NetworkReady stays false, which is not ours to fix.
    CriStatus status = healthy_status();
    status.network_ready = false;
    EXPECT_TRUE(evaluate(expectation(), k_version, status).healthy);
}

TEST(HealthEvaluate, VersionNotAnswering) {
    const util::Expected<std::string> down =
        util::fail(util::ErrorCode::network, "connection refused");
    const HealthReport report = evaluate(expectation(), down, healthy_status());
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason, "containerd does not answer Version: connection refused");
}

TEST(HealthEvaluate, CriStatusNotAnswering) {
    const util::Expected<CriStatus> no_cri =
        util::fail(util::ErrorCode::external, "UNIMPLEMENTED: unknown service");
    const HealthReport report = evaluate(expectation(), k_version, no_cri);
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason,
              "containerd 1.6.20~ds1 does not answer CRI Status: UNIMPLEMENTED: unknown service");
}

TEST(HealthEvaluate, RuntimeNotReady) {
    CriStatus status = healthy_status();
    status.runtime_ready = false;
    status.conditions["RuntimeReady"] = false;
    const HealthReport report = evaluate({}, k_version, status);
    EXPECT_FALSE(report.healthy);
    EXPECT_NE(report.reason.find("RuntimeReady false"), std::string::npos);
}

TEST(HealthEvaluate, ConditionTrueBeforeMustStayTrue) {
    HealthExpectation expected = expectation();
    expected.conditions_before["NetworkReady"] = true;
    const HealthReport report = evaluate(expected, k_version, healthy_status());
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason,
              "the CRI condition NetworkReady was true before the change and is not now");

    CriStatus vanished = healthy_status();
    vanished.conditions.erase("NetworkReady");
    EXPECT_FALSE(evaluate(expected, k_version, vanished).healthy);
}

TEST(HealthEvaluate, DesiredHandlerMissing) {
    CriStatus status = healthy_status();
    std::erase_if(status.handlers, [](const auto& h) { return h.name == "spin"; });
    const HealthReport report = evaluate(expectation(), k_version, status);
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason,
              "runtime handler \"spin\" is not registered in containerd's CRI config");
}

TEST(HealthEvaluate, DesiredHandlerPointingElsewhere) {
    CriStatus status = healthy_status();
    status.handlers[1].runtime_type =
        "/var/lib/shimkeeper/store/sha256/old/containerd-shim-spin-v2";
    HealthReport report = evaluate(expectation(), k_version, status);
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason, "runtime handler \"spin\" runs "
                             "/var/lib/shimkeeper/store/sha256/old/containerd-shim-spin-v2, "
                             "expected " +
                                 k_spin);

    // A non-path runtime_type without runtime_path: containerd searches its PATH.
    status = healthy_status();
    status.handlers[1] = {"spin", "io.containerd.spin.v2", ""};
    report = evaluate(expectation(), k_version, status);
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason,
              "runtime handler \"spin\" runs runtime_type io.containerd.spin.v2, expected " +
                  k_spin);
}

TEST(HealthEvaluate, AbsoluteRuntimeTypeWinsOverRuntimePath) {
    EXPECT_EQ(effective_binary({"a", "/usr/bin/shim", "/other"}), "/usr/bin/shim");
    EXPECT_EQ(effective_binary({"a", "io.containerd.a.v2", "/other"}), "/other");
    EXPECT_EQ(effective_binary({"a", "io.containerd.a.v2", ""}), "");
}

TEST(HealthEvaluate, HandlerThatMustStayIsGone) {
    CriStatus status = healthy_status();
    status.handlers.erase(status.handlers.begin()); // runc
    const HealthReport report = evaluate(expectation(), k_version, status);
    EXPECT_FALSE(report.healthy);
    EXPECT_EQ(report.reason,
              "runtime handler \"runc\" was registered before the change and is gone");
}

} // namespace health_evaluate
} // namespace
