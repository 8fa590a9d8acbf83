// One shim file from a registry: the manifest the reference names (an index resolved to this
// node's platform), then either an artifact's layer (the file itself, picked by its
// org.opencontainers.image.title annotation when there are several) or, for a container
// image, `path` found in its layers (layer_search.hpp). Every manifest and blob is checked
// against its digest as it streams in; on any failure nothing is left in tmp_dir.
#pragma once

#include "shimkeeper/fetch/oci/registry_client.hpp"

namespace shimkeeper::fetch::oci {

inline constexpr std::string_view k_title_annotation = "org.opencontainers.image.title";

struct OciRequest {
    spec::OciReference reference;
    std::string path;                           // normalised ("usr/bin/shim"); required for images
    std::string architecture;                   // this node's, Kubernetes spelling
    std::optional<std::string> expected_sha256; // of the resulting file, when already known
    std::optional<std::filesystem::path> registry_config_dir; // containerd's certs.d
};

struct OciResult {
    DownloadResult file;                     // temp file in tmp_dir: the caller keeps or removes it
    std::optional<std::string> index_digest; // when the reference named an index
    std::string manifest_digest;             // the platform's manifest
    std::string layer_digest;                // the layer the file came from
    std::string kind;                        // "artifact" or "image"
};

util::Expected<OciResult> fetch_oci(const RegistryContext& context, const OciRequest& request);

} // namespace shimkeeper::fetch::oci
