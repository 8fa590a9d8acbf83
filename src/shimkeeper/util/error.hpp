// Error values for every fallible function: std::expected<T, Error> and a TRY helper.
// Exceptions are caught only at the top (each command, the daemon loop).
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace shimkeeper::util {

enum class ErrorCode {
    invalid_input, // bad desired state, flags, names: exit code 2
    io,            // filesystem
    network,       // HTTP, TLS, sockets; an API server that did not answer
    refused,       // an API server refused the credential (HTTP 401, 403)
    checksum,      // digest mismatch
    archive,       // unreadable or hostile archive
    not_found,     // something named does not exist
    conflict,      // the node holds something we must not overwrite
    changed,       // a file changed on disk after it was read for the plan (another writer)
    external,      // another program (containerd, systemd) failed
    internal,      // a bug in shimkeeper
};

const char* to_string(ErrorCode code);

class Error {
public:
    Error(ErrorCode code, std::string message, int sys_errno = 0)
        : m_code(code), m_message(std::move(message)), m_errno(sys_errno) {}

    // An error from a failed system call: appends strerror(err).
    static Error from_errno(ErrorCode code, std::string message, int err);

    ErrorCode code() const { return m_code; }
    const std::string& message() const { return m_message; }
    int sys_errno() const { return m_errno; }

    // Adds context in front: "loading shims.d/a.toml: <message>".
    Error with_context(const std::string& context) &&;

    // The process exit code this error maps to: 2 for bad input, 1 otherwise.
    int exit_code() const { return m_code == ErrorCode::invalid_input ? 2 : 1; }

private:
    ErrorCode m_code;
    std::string m_message;
    int m_errno;
};

template <typename T> using Expected = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
    return std::unexpected(Error(code, std::move(message)));
}

} // namespace shimkeeper::util

// TRY(expr): evaluates an Expected; on error returns it from the enclosing function,
// otherwise yields the value (or nothing for Expected<void>).
#define TRY(expr)                                                                                  \
    __extension__({                                                                                \
        auto&& sk_try_result_ = (expr);                                                            \
        if (!sk_try_result_)                                                                       \
            return std::unexpected(std::move(sk_try_result_).error());                             \
        std::move(sk_try_result_).value();                                                         \
    })
