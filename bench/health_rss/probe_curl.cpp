// Probe 1: containerd's Version over shimkeeper's own transport (libcurl HTTP/2 + protobuf-lite).
#include "rss.hpp"
#include "shimkeeper/health/grpc_unix_client.hpp"
#include "shimkeeper/health/proto/version.pb.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: probe_curl SOCKET\n";
        return 2;
    }
    shimkeeper::health::GrpcUnixClient client(argv[1]);
    const containerd::services::version::v1::VersionRequest request;
    const auto answer =
        client.call("/containerd.services.version.v1.Version/Version", request.SerializeAsString(),
                    std::chrono::seconds(5), shimkeeper::health::Idempotent::yes);
    if (!answer) {
        std::cerr << answer.error().message() << "\n";
        return 1;
    }
    containerd::services::version::v1::VersionResponse response;
    response.ParseFromString(*answer);
    print_memory("libcurl+protobuf-lite", response.version());
    return 0;
}
