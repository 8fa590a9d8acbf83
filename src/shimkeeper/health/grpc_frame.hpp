// gRPC's wire format on top of HTTP/2, the pure part: length-prefixed messages in the body and
// the call's outcome in the grpc-status / grpc-message trailers. Kept apart from the transport so
// that it can be tested byte for byte without a server.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::health {

// 1 byte "compressed" flag (0: we never compress) + 4 bytes big-endian length + the message.
std::string frame_message(std::string_view message);

// The single message of a unary response body. Fails on a truncated frame, a compressed frame
// (we announce no grpc-accept-encoding, so a server must not send one) or extra bytes.
util::Expected<std::string> unframe_unary(std::string_view body);

// The outcome of a call as the server reported it.
struct GrpcStatus {
    int code = 0;        // 0 OK, 12 UNIMPLEMENTED, 14 UNAVAILABLE, ...
    std::string message; // grpc-message, percent-decoded
};

// Looks for grpc-status / grpc-message among raw header lines ("name: value\r\n"), which may be
// the response headers (a trailers-only response) or the trailers. nullopt: no grpc-status seen.
std::optional<GrpcStatus> find_grpc_status(const std::vector<std::string>& header_lines);

// grpc-message is percent-encoded (RFC 3986 style) by the server.
std::string percent_decode(std::string_view text);

// "UNIMPLEMENTED" for 12, "code 42" for codes outside the table.
std::string grpc_code_name(int code);

} // namespace shimkeeper::health
