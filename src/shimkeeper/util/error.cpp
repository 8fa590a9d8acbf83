#include "shimkeeper/util/error.hpp"

#include <cstring>

namespace shimkeeper::util {

const char* to_string(ErrorCode code) {
    switch (code) {
    case ErrorCode::invalid_input:
        return "invalid input";
    case ErrorCode::io:
        return "i/o error";
    case ErrorCode::network:
        return "network error";
    case ErrorCode::refused:
        return "refused by the API server";
    case ErrorCode::checksum:
        return "checksum mismatch";
    case ErrorCode::archive:
        return "archive error";
    case ErrorCode::not_found:
        return "not found";
    case ErrorCode::conflict:
        return "conflict";
    case ErrorCode::changed:
        return "changed on disk";
    case ErrorCode::external:
        return "external program failed";
    case ErrorCode::internal:
        return "internal error";
    }
    return "error";
}

Error Error::from_errno(ErrorCode code, std::string message, int err) {
    message += ": ";
    message += std::strerror(err);
    return Error(code, std::move(message), err);
}

Error Error::with_context(const std::string& context) && {
    m_message = context + ": " + m_message;
    return std::move(*this);
}

} // namespace shimkeeper::util
