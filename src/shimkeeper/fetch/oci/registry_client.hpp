// Requests to one repository of a registry: manifests and blobs over the Downloader (so the same
// redirect policy, timeouts, size caps, retries and progress apply as to URLs), tried on each
// of the registry's hosts in order (mirrors first), with authentication as the registry asks
// for it: anonymous first, then on a 401 either HTTP basic or a bearer token from the
// challenge's realm (credentials from the auth file when there are any). A token is kept for
// the host until it expires, so one fetch asks the token server once.
#pragma once

#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/fetch/oci/hosts.hpp"
#include "shimkeeper/fetch/oci/manifest.hpp"
#include "shimkeeper/spec/oci_reference.hpp"

#include <chrono>
#include <filesystem>
#include <map>

namespace shimkeeper::fetch::oci {

struct RegistryContext {
    Downloader* downloader = nullptr;
    spec::FetchSettings settings;
    std::filesystem::path tmp_dir; // downloads land here (the store's tmp/)
    std::string label;             // the shim's name, for progress and errors
    std::function<void()> heartbeat;
    std::function<bool()> abandon; // DownloadRequest::abandon of each request
    std::vector<std::filesystem::path> auth_files;
};

struct FetchedManifest {
    std::string bytes;
    std::string content_type;
    std::string digest; // "sha256:<hex>" of `bytes`
};

class RegistryClient {
public:
    RegistryClient(RegistryContext context, spec::OciReference reference,
                   std::vector<RegistryHost> hosts);

    // By tag (hosts with "resolve") or by digest (hosts with "pull"; the bytes are checked
    // against it before anything reads them).
    util::Expected<FetchedManifest> manifest(const std::string& tag_or_digest);
    // Streams the blob into a temp file in tmp_dir, checked against its digest and size.
    util::Expected<DownloadResult> blob(const Descriptor& descriptor);

private:
    struct Token {
        std::string header; // "Authorization: ..."
        std::chrono::steady_clock::time_point expires;
    };
    enum class Need { resolve, pull };

    util::Expected<DownloadResult> get_any(Need need, const std::string& path,
                                           const std::optional<std::string>& sha256,
                                           std::vector<std::string> headers, std::uint64_t max_size,
                                           ResponseInfo& info);
    util::Expected<DownloadResult> get(const RegistryHost& host, const std::string& path,
                                       const std::optional<std::string>& sha256,
                                       const std::vector<std::string>& headers,
                                       std::uint64_t max_size, ResponseInfo& info);
    util::Expected<Token> authorize(const RegistryHost& host, const ResponseInfo& info);
    util::Expected<Token> bearer_token(const RegistryHost& host,
                                       const std::map<std::string, std::string>& params,
                                       const std::optional<std::string>& basic);
    util::Error unauthorized(const RegistryHost& host, long status,
                             const std::optional<std::filesystem::path>& credentials_file) const;

    RegistryContext m_context;
    spec::OciReference m_reference;
    std::vector<RegistryHost> m_hosts;
    std::map<std::string, Token> m_tokens; // by host api_root
};

} // namespace shimkeeper::fetch::oci
