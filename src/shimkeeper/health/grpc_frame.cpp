#include "shimkeeper/health/grpc_frame.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>

namespace shimkeeper::health {

namespace {

constexpr std::size_t k_header_size = 5;

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return text;
}

bool equals_ignore_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

} // namespace

std::string frame_message(std::string_view message) {
    const auto size = static_cast<std::uint32_t>(message.size());
    std::string framed;
    framed.reserve(k_header_size + message.size());
    framed.push_back('\0');
    for (int shift = 24; shift >= 0; shift -= 8) {
        framed.push_back(static_cast<char>((size >> shift) & 0xffu));
    }
    framed.append(message);
    return framed;
}

util::Expected<std::string> unframe_unary(std::string_view body) {
    if (body.size() < k_header_size) {
        return util::fail(util::ErrorCode::external,
                          "gRPC response body holds " + std::to_string(body.size()) +
                              " bytes, less than one 5-byte message header");
    }
    if (body[0] != '\0') {
        return util::fail(util::ErrorCode::external,
                          "gRPC response message is compressed, but no compression was offered");
    }
    std::uint32_t size = 0;
    for (std::size_t i = 1; i < k_header_size; ++i) {
        size = (size << 8) | static_cast<unsigned char>(body[i]);
    }
    const std::size_t available = body.size() - k_header_size;
    if (size > available) {
        return util::fail(util::ErrorCode::external,
                          "gRPC response message truncated: header says " + std::to_string(size) +
                              " bytes, body holds " + std::to_string(available));
    }
    if (size < available) {
        return util::fail(util::ErrorCode::external, "gRPC unary response carries " +
                                                         std::to_string(available - size) +
                                                         " bytes after its one message");
    }
    return std::string(body.substr(k_header_size));
}

std::optional<GrpcStatus> find_grpc_status(const std::vector<std::string>& header_lines) {
    std::optional<GrpcStatus> status;
    std::string message;
    for (const std::string& line : header_lines) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        const std::string_view name = trim(std::string_view(line).substr(0, colon));
        const std::string_view value = trim(std::string_view(line).substr(colon + 1));
        if (equals_ignore_case(name, "grpc-status")) {
            int code = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), code);
            if (ec != std::errc{} || end != value.data() + value.size()) {
                code = 2; // UNKNOWN: the server sent something that is not a status code
            }
            status = GrpcStatus{code, {}};
        } else if (equals_ignore_case(name, "grpc-message")) {
            message = percent_decode(value);
        }
    }
    if (status) {
        status->message = std::move(message);
    }
    return status;
}

std::string percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size()) {
            const int high = hex_value(text[i + 1]);
            const int low = hex_value(text[i + 2]);
            if (high >= 0 && low >= 0) {
                out.push_back(static_cast<char>(high * 16 + low));
                i += 2;
                continue;
            }
        }
        out.push_back(text[i]);
    }
    return out;
}

std::string grpc_code_name(int code) {
    static constexpr std::array<const char*, 17> k_names = {
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    if (code >= 0 && static_cast<std::size_t>(code) < k_names.size()) {
        return k_names[static_cast<std::size_t>(code)];
    }
    return "code " + std::to_string(code);
}

} // namespace shimkeeper::health
