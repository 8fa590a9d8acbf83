#include "shimkeeper/util/curl_handles.hpp"

#include <string>

namespace shimkeeper::util {

namespace {

// curl_global_init is not thread-safe on old libcurl and must run before the first handle:
// a function-local static runs it exactly once, on first use, under the C++ runtime's guard.
CURLcode global_init_once() {
    static const CURLcode k_result = curl_global_init(CURL_GLOBAL_DEFAULT);
    return k_result;
}

} // namespace

util::Expected<CurlEasy> make_curl_easy() {
    if (CURLcode rc = global_init_once(); rc != CURLE_OK) {
        return util::fail(util::ErrorCode::internal,
                          std::string("cannot initialise libcurl: ") + curl_easy_strerror(rc));
    }
    CurlEasy handle(curl_easy_init());
    if (!handle) {
        return util::fail(util::ErrorCode::internal, "cannot create a libcurl handle");
    }
    return handle;
}

} // namespace shimkeeper::util
