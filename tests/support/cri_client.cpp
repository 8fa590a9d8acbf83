// cri-client: a small test tool that speaks to containerd through shimkeeper's own gRPC edge.
// Node and integration tests use it to ask what a kubelet would ask (CRI Status) and to start
// pods the way a kubelet does (RunPodSandbox with a runtime_handler and host networking).
//
//   cri-client --socket S version
//   cri-client --socket S status [--config]
//   cri-client --socket S runtime-handlers    (CRI Status's own runtime_handlers list, 2.0+)
//   cri-client --socket S wait-healthy [--timeout MS] [--handler NAME=PATH]... [--keep NAME]...
//   cri-client --socket S run-pod NAME HANDLER CGROUP_PARENT     (prints the sandbox id)
//   cri-client --socket S stop-pod ID | remove-pod ID | list-pods
#include "shimkeeper/health/containerd_client.hpp"
#include "shimkeeper/health/grpc_unix_client.hpp"
#include "shimkeeper/health/proto/cri.pb.h"
#include "shimkeeper/health/wait_healthy.hpp"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace shimkeeper;
using std::chrono::milliseconds;

constexpr milliseconds k_call_timeout{30'000};

int usage() {
    std::cerr << "usage: cri-client --socket PATH version|status [--config]|runtime-handlers|"
                 "wait-healthy [--timeout MS] [--handler NAME=PATH]... [--keep NAME]...|"
                 "run-pod NAME HANDLER CGROUP_PARENT|stop-pod ID|remove-pod ID|list-pods\n";
    return 2;
}

int report(const util::Error& error) {
    std::cerr << "cri-client: " << error.message() << "\n";
    return 1;
}

// One CRI call: serialize, send, parse.
template <typename Response, typename Request>
util::Expected<Response> cri_call(health::GrpcUnixClient& rpc, const char* method,
                                  const Request& request, health::Idempotent idempotent) {
    const std::string answer =
        TRY(rpc.call(std::string("/runtime.v1.RuntimeService/") + method,
                     request.SerializeAsString(), k_call_timeout, idempotent));
    Response response;
    if (!response.ParseFromString(answer)) {
        return util::fail(util::ErrorCode::external,
                          std::string("CRI ") + method + " answer does not parse");
    }
    return response;
}

int status(health::ContainerdClient& client, bool print_config) {
    const auto status = client.cri_status(k_call_timeout);
    if (!status) {
        return report(status.error());
    }
    if (print_config) {
        std::cout << status->raw_config_json << "\n";
        return 0;
    }
    std::cout << "runtime_ready\t" << (status->runtime_ready ? "true" : "false") << "\n";
    std::cout << "network_ready\t" << (status->network_ready ? "true" : "false") << "\n";
    for (const auto& [type, value] : status->conditions) {
        std::cout << "condition\t" << type << "\t" << (value ? "true" : "false") << "\n";
    }
    for (const auto& handler : status->handlers) {
        std::cout << "handler\t" << handler.name << "\t" << handler.runtime_type << "\t"
                  << handler.runtime_path << "\n";
    }
    return 0;
}

// The names in StatusResponse.runtime_handlers exactly as containerd sends them (filled from 2.0;
// empty before), one per line; the default handler has an empty name and prints as "(default)".
// `status` merges them into the config's handlers, so it cannot show which list named a handler.
int runtime_handlers(health::GrpcUnixClient& rpc) {
    runtime::v1::StatusRequest request;
    request.set_verbose(true);
    const auto response =
        cri_call<runtime::v1::StatusResponse>(rpc, "Status", request, health::Idempotent::yes);
    if (!response) {
        return report(response.error());
    }
    for (const auto& handler : response->runtime_handlers()) {
        std::cout << (handler.name().empty() ? "(default)" : handler.name()) << "\n";
    }
    return 0;
}

int wait_healthy(health::ContainerdClient& client, const std::vector<std::string>& args) {
    health::HealthExpectation expectation;
    milliseconds timeout{30'000};
    for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
        const std::string& value = args[i + 1];
        if (args[i] == "--timeout") {
            timeout = milliseconds{std::stoll(value)};
        } else if (args[i] == "--handler" && value.find('=') != std::string::npos) {
            expectation.handlers[value.substr(0, value.find('='))] =
                value.substr(value.find('=') + 1);
        } else if (args[i] == "--keep") {
            expectation.must_keep.push_back(value);
        } else {
            return usage();
        }
    }
    if (args.size() % 2 != 0) {
        return usage();
    }
    const health::HealthReport result = health::wait_healthy(client, expectation, timeout);
    std::cout << (result.healthy ? "healthy: " : "unhealthy: ") << result.reason << "\n";
    return result.healthy ? 0 : 1;
}

int run_pod(health::GrpcUnixClient& rpc, const std::string& name, const std::string& handler,
            const std::string& cgroup_parent) {
    runtime::v1::RunPodSandboxRequest request;
    request.set_runtime_handler(handler);
    runtime::v1::PodSandboxConfig& config = *request.mutable_config();
    config.mutable_metadata()->set_name(name);
    config.mutable_metadata()->set_uid(name + "-uid");
    config.mutable_metadata()->set_namespace_("shimkeeper-test");
    config.mutable_linux()->set_cgroup_parent(cgroup_parent);
    config.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
        runtime::v1::NODE);
    const auto response = cri_call<runtime::v1::RunPodSandboxResponse>(
        rpc, "RunPodSandbox", request, health::Idempotent::no);
    if (!response) {
        return report(response.error());
    }
    std::cout << response->pod_sandbox_id() << "\n";
    return 0;
}

int list_pods(health::GrpcUnixClient& rpc) {
    const auto response = cri_call<runtime::v1::ListPodSandboxResponse>(
        rpc, "ListPodSandbox", runtime::v1::ListPodSandboxRequest{}, health::Idempotent::yes);
    if (!response) {
        return report(response.error());
    }
    for (const auto& pod : response->items()) {
        std::cout << pod.id() << "\t" << pod.metadata().name() << "\t"
                  << (pod.state() == runtime::v1::SANDBOX_READY ? "ready" : "notready") << "\t"
                  << pod.runtime_handler() << "\n";
    }
    return 0;
}

template <typename Response, typename Request>
int pod_call(health::GrpcUnixClient& rpc, const char* method, const std::string& id) {
    Request request;
    request.set_pod_sandbox_id(id);
    // Stop and Remove are idempotent by the CRI's own contract.
    const auto response = cri_call<Response>(rpc, method, request, health::Idempotent::yes);
    return response ? 0 : report(response.error());
}

} // namespace

int main(int argc, char** argv) try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() < 3 || args[0] != "--socket") {
        return usage();
    }
    const std::string socket = args[1];
    const std::string command = args[2];
    const std::vector<std::string> rest(args.begin() + 3, args.end());
    auto client = health::make_containerd_client(socket);
    health::GrpcUnixClient rpc(socket);

    if (command == "version" && rest.empty()) {
        const auto version = client->version(k_call_timeout);
        if (!version) {
            return report(version.error());
        }
        std::cout << *version << "\n";
        return 0;
    }
    if (command == "status" && (rest.empty() || rest == std::vector<std::string>{"--config"})) {
        return status(*client, !rest.empty());
    }
    if (command == "runtime-handlers" && rest.empty()) {
        return runtime_handlers(rpc);
    }
    if (command == "wait-healthy") {
        return wait_healthy(*client, rest);
    }
    if (command == "run-pod" && rest.size() == 3) {
        return run_pod(rpc, rest[0], rest[1], rest[2]);
    }
    if (command == "stop-pod" && rest.size() == 1) {
        return pod_call<runtime::v1::StopPodSandboxResponse, runtime::v1::StopPodSandboxRequest>(
            rpc, "StopPodSandbox", rest[0]);
    }
    if (command == "remove-pod" && rest.size() == 1) {
        return pod_call<runtime::v1::RemovePodSandboxResponse,
                        runtime::v1::RemovePodSandboxRequest>(rpc, "RemovePodSandbox", rest[0]);
    }
    if (command == "list-pods" && rest.empty()) {
        return list_pods(rpc);
    }
    return usage();
} catch (const std::exception& error) {
    std::cerr << "cri-client: " << error.what() << "\n";
    return 2;
}
