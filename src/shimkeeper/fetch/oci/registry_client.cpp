#include "shimkeeper/fetch/oci/registry_client.hpp"

#include "shimkeeper/fetch/oci/auth_file.hpp"
#include "shimkeeper/fetch/oci/challenge.hpp"
#include "shimkeeper/util/fs.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::fetch::oci {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t k_max_manifest = 4ull << 20; // the distribution spec's own limit
constexpr std::uint64_t k_max_token_answer = 1ull << 20;
constexpr std::chrono::seconds k_default_token_life{60}; // the token spec's default
constexpr std::chrono::seconds k_token_margin{5};        // renewed a little before it expires

std::string percent_encode(std::string_view text) {
    static constexpr char k_hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += k_hex[c >> 4];
            out += k_hex[c & 15];
        }
    }
    return out;
}

// The temp file's bytes, the file removed either way.
util::Expected<std::string> take_file(const DownloadResult& result) {
    auto bytes = util::read_file(result.file);
    (void)util::remove_all(result.file);
    return bytes;
}

std::string hex_of(const std::string& digest) {
    return digest.substr(digest.find(':') + 1);
}

} // namespace

RegistryClient::RegistryClient(RegistryContext context, spec::OciReference reference,
                               std::vector<RegistryHost> hosts)
    : m_context(std::move(context)), m_reference(std::move(reference)), m_hosts(std::move(hosts)) {}

util::Expected<FetchedManifest> RegistryClient::manifest(const std::string& tag_or_digest) {
    auto pinned = spec::normalise_digest(tag_or_digest);
    ResponseInfo info;
    auto result = TRY(get_any(pinned ? Need::pull : Need::resolve, "/manifests/" + tag_or_digest,
                              pinned ? std::optional(hex_of(*pinned)) : std::nullopt,
                              {manifest_accept_header()}, k_max_manifest, info));
    FetchedManifest manifest;
    manifest.digest = "sha256:" + result.sha256;
    manifest.content_type = info.content_type;
    manifest.bytes = TRY(take_file(result));
    return manifest;
}

util::Expected<DownloadResult> RegistryClient::blob(const Descriptor& descriptor) {
    if (descriptor.size > m_context.settings.max_size) {
        return util::fail(util::ErrorCode::network,
                          "blob " + descriptor.digest + " of " + m_reference.to_string() + " has " +
                              std::to_string(descriptor.size) +
                              " bytes, more than the fetch max_size limit");
    }
    ResponseInfo info;
    auto fetched = get_any(Need::pull, "/blobs/" + descriptor.digest, hex_of(descriptor.digest), {},
                           m_context.settings.max_size, info);
    if (!fetched && fetched.error().code() == util::ErrorCode::checksum) {
        // The downloader's hint is about a URL's sha256; here the registry's bytes are wrong.
        return util::fail(util::ErrorCode::checksum,
                          "checksum mismatch: blob " + descriptor.digest + " of " +
                              m_reference.to_string() +
                              " arrived with other bytes and was discarded; the registry's copy "
                              "is damaged or something on the way changes it (ask the registry's "
                              "operator, or fetch through a mirror)");
    }
    auto result = TRY(std::move(fetched));
    if (result.size != descriptor.size) {
        (void)util::remove_all(result.file);
        return util::fail(util::ErrorCode::checksum,
                          "blob " + descriptor.digest + " of " + m_reference.to_string() + " has " +
                              std::to_string(result.size) + " bytes, the manifest says " +
                              std::to_string(descriptor.size));
    }
    return result;
}

util::Expected<DownloadResult> RegistryClient::get_any(Need need, const std::string& path,
                                                       const std::optional<std::string>& sha256,
                                                       std::vector<std::string> headers,
                                                       std::uint64_t max_size, ResponseInfo& info) {
    std::string earlier; // why the hosts tried before the last one failed
    std::optional<util::Error> last;
    for (const RegistryHost& host : m_hosts) {
        if (need == Need::resolve ? !host.resolve : !host.pull) {
            continue;
        }
        auto result = get(host, path, sha256, headers, max_size, info);
        if (result) {
            return result;
        }
        if (last) {
            earlier += "; " + last->message();
        }
        last = std::move(result).error();
    }
    if (!last) {
        return util::fail(util::ErrorCode::invalid_input,
                          "no host of registry " + m_reference.registry + " may " +
                              (need == Need::resolve ? "resolve a tag" : "pull") +
                              " (capabilities in its hosts.toml)");
    }
    if (earlier.empty()) {
        return std::unexpected(std::move(*last));
    }
    return std::unexpected(
        util::Error(last->code(), last->message() + " (after other hosts failed" + earlier + ")"));
}

util::Expected<DownloadResult> RegistryClient::get(const RegistryHost& host,
                                                   const std::string& path,
                                                   const std::optional<std::string>& sha256,
                                                   const std::vector<std::string>& headers,
                                                   std::uint64_t max_size, ResponseInfo& info) {
    DownloadRequest request;
    request.url = host.api_root + "/" + m_reference.repository + path;
    request.expected_sha256 = sha256;
    request.settings = m_context.settings;
    request.settings.max_size = std::min(max_size, m_context.settings.max_size);
    if (host.ca_file) {
        request.settings.ca_bundle = host.ca_file;
    }
    request.label = m_context.label;
    request.heartbeat = m_context.heartbeat;
    request.abandon = m_context.abandon;
    request.response = &info;
    for (int round = 0;; ++round) {
        request.headers = headers;
        auto token = m_tokens.find(host.api_root);
        if (token != m_tokens.end() && token->second.expires > Clock::now()) {
            request.headers.push_back(token->second.header);
        }
        auto result = m_context.downloader->download(request, m_context.tmp_dir);
        if (result || info.status != 401 || round > 0) {
            if (!result && (info.status == 401 || info.status == 403)) {
                auto found = find_credentials(m_context.auth_files, m_reference.registry,
                                              m_reference.repository);
                return std::unexpected(
                    unauthorized(host, info.status,
                                 found && *found ? std::optional((*found)->source) : std::nullopt));
            }
            return result;
        }
        m_tokens[host.api_root] = TRY(authorize(host, info));
    }
}

util::Expected<RegistryClient::Token> RegistryClient::authorize(const RegistryHost& host,
                                                                const ResponseInfo& info) {
    auto credentials =
        TRY(find_credentials(m_context.auth_files, m_reference.registry, m_reference.repository));
    auto challenge = parse_challenge(info.www_authenticate);
    auto far_future = Clock::now() + std::chrono::hours(24 * 365);
    if (challenge && challenge->scheme == "bearer") {
        return bearer_token(host, challenge->params,
                            credentials ? std::optional(credentials->basic) : std::nullopt);
    }
    if (!credentials) {
        return std::unexpected(unauthorized(host, 401, std::nullopt));
    }
    return Token{"Authorization: Basic " + credentials->basic, far_future};
}

util::Expected<RegistryClient::Token>
RegistryClient::bearer_token(const RegistryHost& host,
                             const std::map<std::string, std::string>& params,
                             const std::optional<std::string>& basic) {
    auto realm = params.find("realm");
    if (realm == params.end() || realm->second.empty()) {
        return util::fail(util::ErrorCode::network,
                          "registry " + m_reference.registry +
                              " asks for a bearer token but names no realm to get it from");
    }
    std::string url = realm->second;
    char joiner = url.find('?') == std::string::npos ? '?' : '&';
    if (auto service = params.find("service"); service != params.end()) {
        url += joiner + std::string("service=") + percent_encode(service->second);
        joiner = '&';
    }
    auto scope = params.find("scope");
    url += joiner + std::string("scope=") +
           percent_encode(scope != params.end() ? scope->second
                                                : "repository:" + m_reference.repository + ":pull");
    DownloadRequest request;
    request.url = url;
    request.settings = m_context.settings;
    request.settings.max_size = k_max_token_answer;
    request.label = m_context.label + " (token)";
    request.heartbeat = m_context.heartbeat;
    request.abandon = m_context.abandon;
    if (basic) {
        request.headers.push_back("Authorization: Basic " + *basic);
    }
    ResponseInfo info;
    request.response = &info;
    auto answer = m_context.downloader->download(request, m_context.tmp_dir);
    if (!answer) {
        if (info.status == 401 || info.status == 403) {
            auto found = TRY(find_credentials(m_context.auth_files, m_reference.registry,
                                              m_reference.repository));
            return std::unexpected(unauthorized(
                host, info.status, found ? std::optional(found->source) : std::nullopt));
        }
        return std::unexpected(
            std::move(answer).error().with_context("token for " + m_reference.registry));
    }
    auto document = nlohmann::json::parse(TRY(take_file(*answer)), nullptr, false);
    std::string token;
    for (const char* key : {"token", "access_token"}) {
        if (document.is_object() && document.contains(key) && document[key].is_string()) {
            token = document[key].get<std::string>();
            break;
        }
    }
    if (token.empty()) {
        return util::fail(util::ErrorCode::network, "the token server " + realm->second +
                                                        " of registry " + m_reference.registry +
                                                        " answered without a token");
    }
    std::chrono::seconds life = k_default_token_life;
    if (document.contains("expires_in") && document["expires_in"].is_number_integer() &&
        document["expires_in"].get<long>() > 0) {
        life = std::chrono::seconds(document["expires_in"].get<long>());
    }
    return Token{"Authorization: Bearer " + token, Clock::now() + life - k_token_margin};
}

util::Error
RegistryClient::unauthorized(const RegistryHost& host, long status,
                             const std::optional<std::filesystem::path>& credentials_file) const {
    std::string files;
    for (const auto& file : m_context.auth_files) {
        files += (files.empty() ? "" : ", ") + file.string();
    }
    const std::string& registry = m_reference.registry;
    std::string what = "registry " + registry + " (" + host.api_root + ") answered HTTP " +
                       std::to_string(status) + " for " + m_reference.repository + ": ";
    what += credentials_file
                ? "it refused the credentials for " + registry + " in " + credentials_file->string()
                : "no credentials for " + registry + " were found (looked in " +
                      (files.empty() ? "no file" : files) + ")";
    return util::Error(util::ErrorCode::network,
                       what + "; log in with `skopeo login --authfile " +
                           (m_context.auth_files.empty()
                                ? std::string("/run/containers/0/auth.json")
                                : m_context.auth_files.front().string()) +
                           " " + registry + "`, or write auths.\"" + registry +
                           "\".auth (base64 of user:password) into the file named by [fetch] "
                           "auth_file");
}

} // namespace shimkeeper::fetch::oci
