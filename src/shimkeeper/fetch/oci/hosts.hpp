// Where a registry's content is fetched from, read from containerd's own registry host
// configuration (`config_path`, usually /etc/containerd/certs.d): `<dir>/<host>/hosts.toml`,
// else `<dir>/_default/hosts.toml`, else just https://<host>. So an air-gapped node fetches
// shims from the same mirrors its images come from.
//
// From hosts.toml: `server` (the upstream, default https://<host>) and each `[host."URL"]` in
// file order, tried before the server: `capabilities` (a manifest by tag needs "resolve", by
// digest and blobs "pull"), `ca` (a file, relative to the host's folder; the first one of an
// array), `override_path` (URL path is the API root instead of <path>/v2). `skip_verify` and
// client certificates are not honoured: a binary that runs as root is fetched over verified
// TLS or plain http only.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::fetch::oci {

struct RegistryHost {
    std::string api_root; // "https://mirror:5000/v2": requests go to <api_root>/<repo>/...
    bool resolve = true;  // may answer a manifest request by tag
    bool pull = true;     // may serve manifests by digest and blobs
    std::optional<std::string> ca_file;
    bool is_mirror = false;
};

// `config_dir` absent or missing on disk: the registry itself over https.
util::Expected<std::vector<RegistryHost>>
registry_hosts(const std::optional<std::filesystem::path>& config_dir, const std::string& registry);

} // namespace shimkeeper::fetch::oci
