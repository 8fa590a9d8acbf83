// Event objects and MicroTime text, without a server.
#include "shimkeeper/kubeapi/event_recorder.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"

#include <gtest/gtest.h>

namespace {
namespace kubeapi_event {

using namespace shimkeeper::kubeapi;

std::chrono::system_clock::time_point at_micros(long long micros) {
    return std::chrono::system_clock::time_point(std::chrono::microseconds(micros));
}

TEST(KubeMicroTime, Rfc3339WithMicroseconds) {
    EXPECT_EQ(micro_time(at_micros(0)), "1970-01-01T00:00:00.000000Z");
    EXPECT_EQ(micro_time(at_micros(1'700'000'000'123'456)), "2023-11-14T22:13:20.123456Z");
}

TEST(KubeEvent, ClusterScopedObjectsReportIntoDefault) {
    ObjectReference node{"v1", "Node", "node-a", "", "uid-1"};
    ObjectReference lease{"coordination.k8s.io/v1", "Lease", "l", "shimkeeper-system", ""};
    EXPECT_EQ(event_namespace_for(node), "default");
    EXPECT_EQ(event_namespace_for(lease), "shimkeeper-system");
}

TEST(KubeEvent, ReferenceFromAnObject) {
    auto reference = ObjectReference::of({{"apiVersion", "containerd.x-k8s.io/v1alpha1"},
                                          {"kind", "Shim"},
                                          {"metadata", {{"name", "spin-v2"}, {"uid", "u-2"}}}});
    EXPECT_EQ(reference.kind, "Shim");
    EXPECT_EQ(reference.name, "spin-v2");
    EXPECT_EQ(reference.uid, "u-2");
    EXPECT_TRUE(reference.namespace_name.empty());
}

TEST(KubeEvent, EventsK8sIoShape) {
    EventSource source{"shimkeeper.containerd.x-k8s.io/agent", "shimkeeper-node-a"};
    ObjectReference node{"v1", "Node", "node-a", "", "uid-1"};
    auto event = build_event(source, node, EventType::warning, "InstallFailed", "Install",
                             std::string(2000, 'x'), at_micros(1'700'000'000'000'000));
    EXPECT_EQ(event["apiVersion"], "events.k8s.io/v1");
    EXPECT_EQ(event["metadata"]["namespace"], "default");
    EXPECT_EQ(event["metadata"]["name"], "node-a.17979cfe362a0000");
    EXPECT_EQ(event["eventTime"], "2023-11-14T22:13:20.000000Z");
    EXPECT_EQ(event["reportingController"], "shimkeeper.containerd.x-k8s.io/agent");
    EXPECT_EQ(event["reportingInstance"], "shimkeeper-node-a");
    EXPECT_EQ(event["type"], "Warning");
    EXPECT_EQ(event["regarding"]["uid"], "uid-1");
    EXPECT_FALSE(event["regarding"].contains("namespace"));
    EXPECT_EQ(event["note"].get<std::string>().size(), 1024u);
}

} // namespace kubeapi_event
} // namespace
