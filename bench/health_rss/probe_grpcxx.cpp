// Probe 2: the same call the way a grpc++ user writes it: generated stub, full protobuf.
// Built twice: alone, and with -DWITH_CURL as the daemon would be (it needs libcurl to fetch).
#include "rss.hpp"
#include "version.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#ifdef WITH_CURL
#include <curl/curl.h>
#endif

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: probe_grpcxx SOCKET\n";
        return 2;
    }
#ifdef WITH_CURL
    // The daemon downloads shims with libcurl anyway: with grpc++ it would carry both.
    curl_global_init(CURL_GLOBAL_DEFAULT);
#endif
    auto channel =
        grpc::CreateChannel(std::string("unix:") + argv[1], grpc::InsecureChannelCredentials());
    auto stub = containerd::services::version::v1::Version::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    containerd::services::version::v1::VersionRequest request;
    containerd::services::version::v1::VersionResponse response;
    const grpc::Status status = stub->Version(&context, request, &response);
    if (!status.ok()) {
        std::cerr << status.error_message() << "\n";
        return 1;
    }
#ifdef WITH_CURL
    print_memory("grpc++ + protobuf + libcurl", response.version());
#else
    print_memory("grpc++ + protobuf", response.version());
#endif
    return 0;
}
