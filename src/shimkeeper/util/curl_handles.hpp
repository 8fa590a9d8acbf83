// RAII owners for libcurl handles, and the one-time global initialisation libcurl requires
// before any handle is made.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <curl/curl.h>
#include <memory>

namespace shimkeeper::util {

struct CurlEasyDeleter {
    void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlSlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

// curl_global_init once per process (a function-local static: thread-safe, no global we
// manage), then a fresh easy handle.
util::Expected<CurlEasy> make_curl_easy();

// Sets one option; a failure names the option so that a too-old libcurl is easy to spot.
template <typename T>
util::Expected<void> set_curl_option(CURL* handle, CURLoption option, T value, const char* name) {
    CURLcode rc = curl_easy_setopt(handle, option, value);
    if (rc != CURLE_OK) {
        return util::fail(util::ErrorCode::internal, std::string("libcurl refused option ") + name +
                                                         ": " + curl_easy_strerror(rc));
    }
    return {};
}

} // namespace shimkeeper::util
