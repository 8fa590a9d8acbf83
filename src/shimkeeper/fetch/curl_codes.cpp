#include "shimkeeper/fetch/curl_codes.hpp"

namespace shimkeeper::fetch {

FailureKind failure_kind_for(CURLcode code) {
    switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
        return FailureKind::connect;
    case CURLE_OPERATION_TIMEDOUT:
        return FailureKind::timeout;
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
        return FailureKind::transfer;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return FailureKind::tls;
    case CURLE_FILESIZE_EXCEEDED:
        return FailureKind::too_large;
    case CURLE_WRITE_ERROR:
        return FailureKind::local;
    case CURLE_RANGE_ERROR:
        return FailureKind::no_resume;
    case CURLE_TOO_MANY_REDIRECTS:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return FailureKind::refused;
    default:
        return FailureKind::other;
    }
}

} // namespace shimkeeper::fetch
