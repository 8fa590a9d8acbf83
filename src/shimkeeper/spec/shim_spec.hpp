// The one model of a desired shim. Loaded from TOML files now, from Shim objects later.
// Everything here has been validated by the loader: names follow their grammar, the fetch
// source has been chosen for this node's architecture.
#pragma once

#include <optional>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace shimkeeper::spec {

// Where a value came from, for error messages: "shims.d/spin.toml:3:1".
struct Location {
    std::string file;
    int line = 0;
    int column = 0;

    std::string to_string() const;
};

// Either a URL (with the artifact's sha256) or an OCI reference (pinned by its manifest digest,
// `sha256` then absent unless a generation recorded the resulting file's digest).
struct FetchSource {
    std::string url;                   // empty for an OCI source
    std::optional<std::string> sha256; // lowercase hex; absent only with allow_unverified
    std::string oci;                   // REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST], validated
    std::string path; // OCI only: the file to take ("usr/bin/shim"), or an artifact's title

    // What the source is, for records and messages: the URL, or "oci://<reference>".
    std::string display() const;
};

struct RuntimeClassSpec {
    std::string name;
};

struct ShimSpec {
    std::string name;         // DNS-1123 label, unique
    std::string handler;      // containerd runtime handler
    std::string runtime_type; // io.containerd.<name>.<version> or an absolute path
    std::string binary;       // file in the archive (default derived from runtime_type)
    std::string version;      // informational, may be empty
    toml::table options;      // the runtime's options table in containerd's config
    FetchSource fetch;        // chosen for this node's architecture
    bool allow_unverified = false;
    bool adopt = false; // take over a handler already defined outside shimkeeper's blocks
    std::optional<RuntimeClassSpec> runtime_class;
    Location location; // the [[shim]] header
    // A Shim object may leave the runtime type out (the proposal's and runtime-class-manager's
    // objects do): how it was derived then, for plan, status and records ("derived from
    // spec.binary containerd-shim-spin-v2"); empty when the spec wrote it.
    std::string runtime_type_derivation;
    // Neither runtimeType nor binary given: the artifact says both (reconcile/derive_runtime.hpp).
    // Until it has been looked at, runtime_type and binary hold the handler's guess
    // io.containerd.<handler>.v2, so that a plan without a download still shows something.
    bool runtime_type_from_artifact = false;
};

} // namespace shimkeeper::spec
