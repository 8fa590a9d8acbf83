#include "shimkeeper/util/url_scheme.hpp"

#include <algorithm>
#include <cctype>

namespace shimkeeper::util {

namespace {

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), text.begin(), [](char lower, char c) {
               return std::tolower(static_cast<unsigned char>(c)) == lower;
           });
}

} // namespace

UrlScheme scheme_of(std::string_view url) {
    if (starts_with_nocase(url, "https://")) {
        return UrlScheme::https;
    }
    if (starts_with_nocase(url, "http://")) {
        return UrlScheme::http;
    }
    if (starts_with_nocase(url, "file://")) {
        return UrlScheme::file;
    }
    return UrlScheme::other;
}

} // namespace shimkeeper::util
