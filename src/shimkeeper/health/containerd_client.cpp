#include "shimkeeper/health/containerd_client.hpp"

#include "shimkeeper/health/grpc_unix_client.hpp"
#include "shimkeeper/health/proto/cri.pb.h"
#include "shimkeeper/health/proto/version.pb.h"

namespace shimkeeper::health {

namespace {

constexpr const char* k_version_method = "/containerd.services.version.v1.Version/Version";
constexpr const char* k_status_method = "/runtime.v1.RuntimeService/Status";
constexpr const char* k_list_pods_method = "/runtime.v1.RuntimeService/ListPodSandbox";

class GrpcContainerdClient final : public ContainerdClient {
public:
    explicit GrpcContainerdClient(std::string socket_path) : m_rpc(std::move(socket_path)) {}

    util::Expected<std::string> version(std::chrono::milliseconds timeout) override {
        const containerd::services::version::v1::VersionRequest request;
        const std::string answer = TRY(
            m_rpc.call(k_version_method, request.SerializeAsString(), timeout, Idempotent::yes));
        containerd::services::version::v1::VersionResponse response;
        if (!response.ParseFromString(answer)) {
            return util::fail(util::ErrorCode::external, "containerd Version answer on " +
                                                             m_rpc.socket_path() +
                                                             " is not a valid VersionResponse");
        }
        return response.version();
    }

    util::Expected<CriStatus> cri_status(std::chrono::milliseconds timeout) override {
        runtime::v1::StatusRequest request;
        request.set_verbose(true);
        const std::string answer =
            TRY(m_rpc.call(k_status_method, request.SerializeAsString(), timeout, Idempotent::yes));
        auto status = parse_cri_status(answer);
        if (!status) {
            return std::unexpected(std::move(status).error().with_context(m_rpc.socket_path()));
        }
        return status;
    }

    util::Expected<std::vector<PodSandboxInfo>>
    pod_sandboxes(std::chrono::milliseconds timeout) override {
        const runtime::v1::ListPodSandboxRequest request;
        const std::string answer = TRY(
            m_rpc.call(k_list_pods_method, request.SerializeAsString(), timeout, Idempotent::yes));
        auto pods = parse_pod_sandboxes(answer);
        if (!pods) {
            return std::unexpected(std::move(pods).error().with_context(m_rpc.socket_path()));
        }
        return pods;
    }

private:
    GrpcUnixClient m_rpc;
};

} // namespace

std::unique_ptr<ContainerdClient> make_containerd_client(std::string socket_path) {
    return std::make_unique<GrpcContainerdClient>(std::move(socket_path));
}

} // namespace shimkeeper::health
