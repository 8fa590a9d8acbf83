// Standard base64 (RFC 4648, with padding) for kubeconfig's *-data fields and the `auth` values
// of registry auth files. Small enough to need no crypto library.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::util {

// nullopt when the text is not base64; whitespace (line breaks in pasted PEM) is skipped.
std::optional<std::string> decode_base64(std::string_view text);

} // namespace shimkeeper::util
