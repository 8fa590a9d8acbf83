// What an OCI reference resolved to on this node, kept in <state>/oci/<key>.json so that a
// reference already fetched costs no request at all (the store is keyed by the file's own
// sha256, which only a fetch reveals) and so that plan/status can show the resolution. The key
// is the pinned digest, the path and the architecture: nothing else decides the file. A record
// is written only after its artifact was committed, and removed when GC collects the artifact.
#pragma once

#include "shimkeeper/store/store.hpp"

#include <optional>
#include <string>

namespace shimkeeper::store {

struct OciResolution {
    std::string reference;    // as written, digest included
    std::string path;         // the file taken ("" for a single-file artifact)
    std::string architecture; // the platform chosen from an index
    std::string index_digest; // "" when the reference named a manifest
    std::string manifest_digest;
    std::string layer_digest;
    std::string kind;            // "image" or "artifact"
    std::string artifact_digest; // sha256 hex of the file: the store's key
};

// nullopt when nothing was recorded (or `pinned_digest` is empty: an unpinned tag is never
// looked up, its content may change).
util::Expected<std::optional<OciResolution>> load_oci_resolution(const Store& store,
                                                                 const std::string& pinned_digest,
                                                                 const std::string& path,
                                                                 const std::string& architecture);

util::Expected<void> save_oci_resolution(const Store& store, const std::string& pinned_digest,
                                         const OciResolution& resolution);

// Removes the records whose artifact the store no longer holds.
util::Expected<void> forget_oci_resolutions(const Store& store);

} // namespace shimkeeper::store
