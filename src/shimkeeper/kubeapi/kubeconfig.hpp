// A kubeconfig file (client-go's format) reduced to what one connection needs: the current
// context's server, its CA, and its user's credentials. YAML is read here only; everything else in
// kubeapi/ speaks JSON.
//
// Refused, with the file and the field named: no current context, dangling names, a server that
// is not https (TLS verification is always on, insecure-skip-tls-verify included), credentials we
// cannot use (exec plugins, basic auth), a key without a certificate, bad base64, unreadable
// files. Relative paths are taken from the kubeconfig's own folder, as kubectl does.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <string>

namespace shimkeeper::kubeapi {

// PEM material given inline (*-data, decoded) or as a file that libcurl reads at each connection,
// so a rotated kubelet client certificate is picked up.
struct PemSource {
    std::string pem;
    std::filesystem::path file;

    bool empty() const { return pem.empty() && file.empty(); }
};

struct KubeConfig {
    std::filesystem::path source; // the kubeconfig file, for messages
    std::string context;
    std::string server;              // https://host:port[/prefix], without a trailing slash
    std::string namespace_name;      // the context's namespace; empty when it names none
    PemSource certificate_authority; // empty: the system's trust store
    PemSource client_certificate;
    PemSource client_key;
    std::string token;                // a fixed bearer token
    std::filesystem::path token_file; // re-read when it changes (projected tokens rotate)
    // What token_file is, for messages.
    std::string token_file_kind = "the kubeconfig's tokenFile";
};

util::Expected<KubeConfig> load_kubeconfig(const std::filesystem::path& file);

// The same from text already read; `file` names it in messages and anchors relative paths.
util::Expected<KubeConfig> parse_kubeconfig(const std::string& text,
                                            const std::filesystem::path& file);

} // namespace shimkeeper::kubeapi
