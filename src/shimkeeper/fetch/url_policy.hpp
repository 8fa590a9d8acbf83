// Which URLs a download may start from and which redirects it may follow. Pure functions, so
// that the rules are tested without a network.
//
// A shim binary ends up running as root next to containerd, so a redirect must never lower the
// transport's guarantees: once a hop was https, every later hop must be https too, and a
// redirect may only lead to http or https (never file://, ftp://, ...). A first URL may be
// file:// (local mirrors, image bakes), since it is written by the node's administrator.
#pragma once

#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/url_scheme.hpp"

#include <string>
#include <string_view>

namespace shimkeeper::fetch {

using util::scheme_of;
using util::UrlScheme;

// The most redirects one attempt follows; one more is refused.
inline constexpr int k_max_redirects = 5;

// Accepts http://, https:// and file:// URLs; anything else is invalid input.
util::Expected<void> check_initial_url(std::string_view url);

// Accepts a redirect from `from` to `to`. `secure_so_far` is true once any earlier hop of the
// chain was https. Refusals name both URLs and say why.
util::Expected<void> check_redirect(std::string_view from, std::string_view to, bool secure_so_far);

// True when both URLs have the same scheme, host and port (default ports made explicit).
// Credentials follow a redirect only within one origin.
bool same_origin(std::string_view a, std::string_view b);

} // namespace shimkeeper::fetch
