#include "shimkeeper/fetch/url_policy.hpp"

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

} // namespace shimkeeper::fetch
