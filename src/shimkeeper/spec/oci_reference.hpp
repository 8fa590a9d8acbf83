// An OCI reference as a shim's spec writes it: REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST].
// The registry part is required (no implied docker.io): a node fetching a binary it will run
// as root should name where from. The digest pins the manifest (or index) and is the
// verification; a reference without one is only accepted with allow_unverified.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace shimkeeper::spec {

struct OciReference {
    std::string registry;              // host[:port], as written
    std::string repository;            // path below the registry
    std::optional<std::string> tag;    // absent with a digest-only reference
    std::optional<std::string> digest; // "sha256:<64 lowercase hex>"

    // What a request asks for: the digest when pinned, else the tag.
    std::string manifest_reference() const;
    std::string to_string() const;
};

// Refusals are invalid input naming the reference and the part that is wrong.
util::Expected<OciReference> parse_oci_reference(std::string_view text);

// The `path` of an OCI source (a file inside an image, or an artifact's title), normalised to
// "usr/bin/shim": a leading "/" is dropped; empty, "." or ".." parts and control characters
// give nullopt.
std::optional<std::string> normalise_oci_path(std::string_view path);

// "sha256:<hex>" with 64 hex digits (lowercased), or nullopt.
std::optional<std::string> normalise_digest(std::string_view text);

} // namespace shimkeeper::spec
