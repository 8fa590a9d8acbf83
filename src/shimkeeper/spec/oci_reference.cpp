#include "shimkeeper/spec/oci_reference.hpp"

#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <algorithm>
#include <cctype>

namespace shimkeeper::spec {

namespace {

constexpr std::size_t k_max_tag = 128;

// One path component of a repository: [a-z0-9]+ joined by '.', '_', '__' or '-'+ (the
// distribution spec's grammar).
bool valid_component(std::string_view part) {
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back())) {
        return false;
    }
    for (std::size_t i = 0; i < part.size(); ++i) {
        char c = part[i];
        if (is_lower_alnum(c) || c == '-') {
            continue;
        }
        if (c == '.' && is_lower_alnum(part[i + 1])) {
            continue;
        }
        if (c == '_' &&
            (is_lower_alnum(part[i + 1]) || (part[i + 1] == '_' && is_lower_alnum(part[i + 2])))) {
            i += part[i + 1] == '_' ? 1 : 0;
            continue;
        }
        return false;
    }
    return true;
}

bool valid_tag(std::string_view tag) {
    auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    if (tag.empty() || tag.size() > k_max_tag || !word(tag.front())) {
        return false;
    }
    return std::ranges::all_of(tag, [&](char c) { return word(c) || c == '.' || c == '-'; });
}

bool valid_registry(std::string_view host) {
    if (host.empty()) {
        return false;
    }
    return std::ranges::all_of(host, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
               c == '[' || c == ']';
    });
}

util::Expected<OciReference> refuse(std::string_view text, const std::string& why) {
    return util::fail(util::ErrorCode::invalid_input,
                      "OCI reference \"" + std::string(text) + "\": " + why +
                          "; write REGISTRY/REPOSITORY[:TAG]@sha256:DIGEST, e.g. "
                          "ghcr.io/example/shim:1.0@sha256:<64 hex digits>");
}

} // namespace

std::optional<std::string> normalise_digest(std::string_view text) {
    constexpr std::string_view k_prefix = "sha256:";
    if (!text.starts_with(k_prefix) || !util::is_sha256_hex(text.substr(k_prefix.size()))) {
        return std::nullopt;
    }
    std::string digest(text);
    std::ranges::transform(digest, digest.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return digest;
}

std::optional<std::string> normalise_oci_path(std::string_view path) {
    while (path.starts_with('/')) {
        path.remove_prefix(1);
    }
    if (path.empty() || path.ends_with('/')) {
        return std::nullopt;
    }
    std::string_view rest = path;
    while (true) {
        auto slash = rest.find('/');
        std::string_view part = rest.substr(0, slash);
        if (part.empty() || part == "." || part == "..") {
            return std::nullopt;
        }
        if (slash == std::string_view::npos) {
            break;
        }
        rest = rest.substr(slash + 1);
    }
    for (char c : path) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return std::nullopt;
        }
    }
    return std::string(path);
}

std::string OciReference::manifest_reference() const {
    return digest ? *digest : tag.value_or("latest");
}

std::string OciReference::to_string() const {
    return registry + "/" + repository + (tag ? ":" + *tag : "") + (digest ? "@" + *digest : "");
}

util::Expected<OciReference> parse_oci_reference(std::string_view text) {
    OciReference ref;
    std::string_view rest = text;
    if (auto at = rest.find('@'); at != std::string_view::npos) {
        ref.digest = normalise_digest(rest.substr(at + 1));
        if (!ref.digest) {
            return refuse(text, "the digest after '@' must be sha256: and 64 hexadecimal digits");
        }
        rest = rest.substr(0, at);
    }
    auto slash = rest.find('/');
    if (slash == std::string_view::npos) {
        return refuse(text, "no registry host before the repository");
    }
    ref.registry = std::string(rest.substr(0, slash));
    if (!valid_registry(ref.registry) ||
        (ref.registry.find_first_of(".:") == std::string::npos && ref.registry != "localhost")) {
        return refuse(text, "'" + ref.registry +
                                "' is not a registry host (a host name with a "
                                "dot or a port, or localhost)");
    }
    rest = rest.substr(slash + 1);
    if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        ref.tag = std::string(rest.substr(colon + 1));
        if (!valid_tag(*ref.tag)) {
            return refuse(text, "the tag '" + *ref.tag +
                                    "' is not valid (letters, digits, '_', "
                                    "'.', '-', at most 128)");
        }
        rest = rest.substr(0, colon);
    }
    ref.repository = std::string(rest);
    std::string_view path = rest;
    while (true) {
        auto next = path.find('/');
        if (!valid_component(path.substr(0, next))) {
            return refuse(text, "the repository '" + ref.repository +
                                    "' is not valid (lowercase letters and digits, separated "
                                    "by '.', '_', '-' or '/')");
        }
        if (next == std::string_view::npos) {
            break;
        }
        path = path.substr(next + 1);
    }
    return ref;
}

} // namespace shimkeeper::spec
