// The URL schemes shimkeeper fetches from, recognised in one place: the spec's validation and
// the downloader's redirect policy both ask this.
#pragma once

#include <string_view>

namespace shimkeeper::util {

enum class UrlScheme { http, https, file, other };

// The scheme of an absolute URL ("<scheme>://"), case-insensitive; `other` when missing or not
// one of http, https, file.
UrlScheme scheme_of(std::string_view url);

} // namespace shimkeeper::util
