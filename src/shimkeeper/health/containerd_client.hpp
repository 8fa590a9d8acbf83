// The containerd health edge: the questions shimkeeper asks a running containerd over its
// gRPC socket. An interface, so that the transaction's logic is tested with a fake; the real
// client speaks gRPC through libcurl (grpc_unix_client.hpp).
#pragma once

#include "shimkeeper/health/cri_status.hpp"
#include "shimkeeper/health/pod_sandboxes.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace shimkeeper::health {

class ContainerdClient {
public:
    virtual ~ContainerdClient() = default;

    // containerd.services.version.v1.Version/Version: "1.6.20~ds1". Answers as soon as the
    // daemon serves, even when the CRI plugin failed to load.
    virtual util::Expected<std::string> version(std::chrono::milliseconds timeout) = 0;

    // runtime.v1.RuntimeService/Status with verbose=true.
    virtual util::Expected<CriStatus> cri_status(std::chrono::milliseconds timeout) = 0;

    // runtime.v1.RuntimeService/ListPodSandbox, unfiltered: every sandbox, ready or not.
    virtual util::Expected<std::vector<PodSandboxInfo>>
    pod_sandboxes(std::chrono::milliseconds timeout) = 0;
};

// The real client for containerd's socket (node path, e.g. /run/containerd/containerd.sock).
std::unique_ptr<ContainerdClient> make_containerd_client(std::string socket_path);

} // namespace shimkeeper::health
