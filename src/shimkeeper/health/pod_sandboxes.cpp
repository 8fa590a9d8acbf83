#include "shimkeeper/health/pod_sandboxes.hpp"

#include "shimkeeper/health/proto/cri.pb.h"

namespace shimkeeper::health {

util::Expected<std::vector<PodSandboxInfo>> parse_pod_sandboxes(std::string_view serialized) {
    runtime::v1::ListPodSandboxResponse response;
    if (!response.ParseFromArray(serialized.data(), static_cast<int>(serialized.size()))) {
        return util::fail(
            util::ErrorCode::external,
            "CRI ListPodSandbox answer is not a valid runtime.v1.ListPodSandboxResponse");
    }
    std::vector<PodSandboxInfo> out;
    for (const auto& pod : response.items()) {
        out.push_back({pod.id(), pod.metadata().name(), pod.metadata().namespace_(),
                       pod.runtime_handler(), pod.state() == runtime::v1::SANDBOX_READY});
    }
    return out;
}

} // namespace shimkeeper::health
