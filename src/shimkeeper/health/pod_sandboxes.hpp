// What CRI ListPodSandbox tells about the pods a containerd runs: which runtime handler each
// sandbox was created with, so that a handler is never removed while a pod still uses it.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::health {

struct PodSandboxInfo {
    std::string id;
    std::string name; // metadata.name
    std::string namespace_name;
    std::string handler; // runtime_handler: RuntimeClass.handler; "" = the default runtime
    bool ready = false;  // SANDBOX_READY; a NOTREADY sandbox still has to be torn down
};

// Decodes a serialized runtime.v1.ListPodSandboxResponse.
util::Expected<std::vector<PodSandboxInfo>> parse_pod_sandboxes(std::string_view serialized);

} // namespace shimkeeper::health
