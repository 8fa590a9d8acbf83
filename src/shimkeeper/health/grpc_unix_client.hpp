// A unary gRPC client over a unix socket, built on libcurl's HTTP/2 (prior knowledge, no TLS).
// Chosen over grpc++ for the daemon's idle memory: see bench/health_rss for the measurement.
// Each call opens its own connection (see the .cpp for why), so a containerd restart between
// calls needs no reconnect logic.
#pragma once

#include "shimkeeper/util/curl_handles.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <curl/curl.h>
#include <memory>
#include <string>
#include <string_view>

namespace shimkeeper::health {

using util::CurlEasy;
using util::CurlSlist;

// Whether a call may be sent again when its answer was lost before any of it arrived.
enum class Idempotent { no, yes };

class GrpcUnixClient {
public:
    explicit GrpcUnixClient(std::string socket_path);

    // Sends one serialized request to `method` ("/package.Service/Method") and returns the
    // serialized response. Errors name the socket and the method: ErrorCode::network when the
    // socket does not answer in time, ErrorCode::external when the server answers with an error.
    // An Idempotent::yes call is resent (within its timeout) when curl lost the whole answer.
    util::Expected<std::string> call(std::string_view method, std::string_view request,
                                     std::chrono::milliseconds timeout, Idempotent idempotent);

    const std::string& socket_path() const { return m_socket_path; }

private:
    std::string m_socket_path;
    CurlEasy m_curl;
    CurlSlist m_headers;
};

} // namespace shimkeeper::health
