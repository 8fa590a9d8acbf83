// The OCI image index / manifest and Docker schema 2 list / manifest, as far as fetching one
// file needs them, parsed from the bytes a registry sent (whose digest was checked first).
// Everything else in them is ignored; anything malformed that we need is an error naming the
// field.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace shimkeeper::fetch::oci {

namespace media {
inline constexpr std::string_view oci_index = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view oci_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view docker_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view docker_manifest =
    "application/vnd.docker.distribution.manifest.v2+json";
} // namespace media

// The Accept header of a manifest request: every type above.
std::string manifest_accept_header();

struct Platform {
    std::string os;
    std::string architecture;
    std::string variant; // may be empty
};

struct Descriptor {
    std::string media_type;
    std::string digest; // "sha256:<hex>", validated
    std::uint64_t size = 0;
    std::optional<Platform> platform;
    std::map<std::string, std::string> annotations;
};

struct Index {
    std::vector<Descriptor> manifests;
};

struct Manifest {
    std::string artifact_type; // OCI 1.1 artifactType, or the config's media type
    Descriptor config;
    std::vector<Descriptor> layers;
};

using ManifestDocument = std::variant<Index, Manifest>;

// `content_type` is the registry's Content-Type; the document's own mediaType decides when
// present. `what` names the document in errors ("manifest sha256:... of example.org/shim").
util::Expected<ManifestDocument>
parse_manifest(std::string_view bytes, std::string_view content_type, const std::string& what);

} // namespace shimkeeper::fetch::oci
