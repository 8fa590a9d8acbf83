#include "shimkeeper/fetch/url_policy.hpp"

#include <algorithm>
#include <cctype>
#include <curl/curl.h>
#include <utility>

namespace shimkeeper::fetch {

util::Expected<void> check_initial_url(std::string_view url) {
    if (scheme_of(url) == UrlScheme::other) {
        return util::fail(util::ErrorCode::invalid_input,
                          "unsupported URL \"" + std::string(url) +
                              "\": use an http://, https:// or file:// URL");
    }
    return {};
}

util::Expected<void> check_redirect(std::string_view from, std::string_view to,
                                    bool secure_so_far) {
    UrlScheme target = scheme_of(to);
    std::string hop = std::string(from) + " redirects to " + std::string(to);
    if (target != UrlScheme::http && target != UrlScheme::https) {
        return util::fail(util::ErrorCode::network,
                          hop + ": refused, a redirect may only lead to an http(s) URL; "
                                "point the shim's fetch.url at the final location");
    }
    if (target == UrlScheme::http && (secure_so_far || scheme_of(from) == UrlScheme::https)) {
        return util::fail(util::ErrorCode::network,
                          hop + ": refused, a redirect must not downgrade https to http; "
                                "fix the server or use an https URL that stays on https");
    }
    return {};
}

namespace {

// "scheme://host:port" in lowercase, or empty when curl cannot parse the URL.
std::string origin_of(std::string_view url) {
    CURLU* parsed = curl_url();
    if (parsed == nullptr) {
        return {};
    }
    std::string origin;
    if (curl_url_set(parsed, CURLUPART_URL, std::string(url).c_str(), 0) == CURLUE_OK) {
        for (auto [part, flags] : {std::pair{CURLUPART_SCHEME, 0u}, std::pair{CURLUPART_HOST, 0u},
                                   std::pair{CURLUPART_PORT, unsigned{CURLU_DEFAULT_PORT}}}) {
            char* text = nullptr;
            if (curl_url_get(parsed, part, &text, flags) == CURLUE_OK) {
                origin += text;
                curl_free(text);
            }
            origin += '|';
        }
    }
    curl_url_cleanup(parsed);
    std::ranges::transform(origin, origin.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return origin;
}

} // namespace

bool same_origin(std::string_view a, std::string_view b) {
    std::string left = origin_of(a);
    return !left.empty() && left == origin_of(b);
}

} // namespace shimkeeper::fetch
