// A registry's WWW-Authenticate challenge (RFC 7235 auth-params): the scheme, and for the
// bearer-token flow the realm, service and scope the token server wants to see.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::fetch::oci {

struct Challenge {
    std::string scheme;                        // lowercase: "bearer", "basic"
    std::map<std::string, std::string> params; // keys lowercase; values unquoted

    std::string param(const std::string& key) const;
};

// nullopt when the header is empty or not a challenge.
std::optional<Challenge> parse_challenge(std::string_view header);

} // namespace shimkeeper::fetch::oci
