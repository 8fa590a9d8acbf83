#include "shimkeeper/kubeapi/kubeconfig.hpp"

#include "shimkeeper/util/base64.hpp"

#include <fstream>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace shimkeeper::kubeapi {

namespace {

using util::ErrorCode;

// Every message starts with the file and the field, so a user can go straight to the line.
class Reader {
public:
    explicit Reader(const std::filesystem::path& file) : m_file(file) {}

    // "clusters[0] (\"c\").cluster" + "server"; a top-level key stands alone.
    static std::string join(const std::string& where, const char* key) {
        return where.empty() ? std::string(key) : where + "." + key;
    }

    std::unexpected<util::Error> bad(const std::string& field, const std::string& what) const {
        return util::fail(ErrorCode::invalid_input,
                          "kubeconfig " + m_file.string() + ": " + field + ": " + what);
    }

    // A string field; empty when absent. Not a scalar: an error.
    util::Expected<std::string> text(const YAML::Node& parent, const char* key,
                                     const std::string& where) const {
        YAML::Node node = parent[key];
        if (!node || node.IsNull()) {
            return std::string();
        }
        if (!node.IsScalar()) {
            return bad(join(where, key), "must be a string");
        }
        return node.Scalar();
    }

    // A file field's path: relative to the kubeconfig's folder; empty when absent.
    util::Expected<std::filesystem::path> location(const YAML::Node& parent, const char* key,
                                                   const std::string& where) const {
        std::string value = TRY(text(parent, key, where));
        if (value.empty()) {
            return std::filesystem::path();
        }
        std::filesystem::path path = value;
        if (path.is_relative()) {
            path = m_file.parent_path() / path;
        }
        return path;
    }

    // A file field that must exist now.
    util::Expected<std::filesystem::path> file(const YAML::Node& parent, const char* key,
                                               const std::string& where) const {
        std::filesystem::path path = TRY(location(parent, key, where));
        if (path.empty()) {
            return path;
        }
        std::ifstream probe(path);
        if (!probe) {
            return bad(join(where, key), "cannot read " + path.string());
        }
        return path;
    }

    util::Expected<std::string> base64(const YAML::Node& parent, const char* key,
                                       const std::string& where) const {
        std::string value = TRY(text(parent, key, where));
        if (value.empty()) {
            return value;
        }
        auto decoded = util::decode_base64(value);
        if (!decoded || decoded->empty()) {
            return bad(join(where, key), "is not valid base64");
        }
        return *decoded;
    }

    // A PEM given as a file or inline, never both (which one would win is a guess).
    util::Expected<PemSource> pem(const YAML::Node& parent, const std::string& key,
                                  const std::string& where) const {
        std::string data_key = key + "-data";
        PemSource source;
        source.file = TRY(file(parent, key.c_str(), where));
        source.pem = TRY(base64(parent, data_key.c_str(), where));
        if (!source.file.empty() && !source.pem.empty()) {
            return bad(where, "both " + key + " and " + data_key + " are set; keep one");
        }
        return source;
    }

    // The entry of a named list (clusters, users, contexts) called `name`, and its field path.
    util::Expected<std::pair<YAML::Node, std::string>> named(const YAML::Node& top,
                                                             const char* list, const char* inner,
                                                             const std::string& name,
                                                             const std::string& named_by) const {
        YAML::Node entries = top[list];
        if (entries && !entries.IsNull() && !entries.IsSequence()) {
            return bad(list, "must be a list");
        }
        for (std::size_t i = 0; entries && i < entries.size(); ++i) {
            YAML::Node entry = entries[i];
            if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar() ||
                entry["name"].Scalar() != name) {
                continue;
            }
            std::string where =
                std::string(list) + "[" + std::to_string(i) + "] (\"" + name + "\")." + inner;
            YAML::Node body = entry[inner];
            if (!body || !body.IsMap()) {
                return bad(where, "missing or not a mapping");
            }
            return std::pair{body, where};
        }
        return bad(named_by, "names \"" + name + "\" but " + list + " has no entry of that name");
    }

private:
    std::filesystem::path m_file;
};

util::Expected<void> read_cluster(const Reader& reader, const YAML::Node& cluster,
                                  const std::string& where, KubeConfig& config) {
    config.server = TRY(reader.text(cluster, "server", where));
    if (config.server.empty()) {
        return reader.bad(where + ".server", "missing");
    }
    if (!config.server.starts_with("https://")) {
        return reader.bad(where + ".server",
                          "\"" + config.server + "\" is not https:// (TLS is always verified)");
    }
    while (config.server.ends_with('/')) {
        config.server.pop_back();
    }
    if (YAML::Node skip = cluster["insecure-skip-tls-verify"];
        skip && skip.IsScalar() && skip.Scalar() == "true") {
        return reader.bad(where + ".insecure-skip-tls-verify",
                          "is not supported: TLS is always verified; give certificate-authority");
    }
    config.certificate_authority = TRY(reader.pem(cluster, "certificate-authority", where));
    return {};
}

util::Expected<void> read_user(const Reader& reader, const YAML::Node& user,
                               const std::string& where, KubeConfig& config) {
    for (const char* unsupported : {"exec", "auth-provider", "username", "password"}) {
        if (user[unsupported]) {
            return reader.bad(where + "." + unsupported,
                              "is not supported; use a token, tokenFile or a client certificate");
        }
    }
    config.token = TRY(reader.text(user, "token", where));
    if (config.token.empty()) { // a token beside a tokenFile wins, as in client-go
        // Read at each request (bearer_token.hpp), which reports one missing or empty as a
        // refused credential naming the file: a token that goes away must not fail the load.
        config.token_file = TRY(reader.location(user, "tokenFile", where));
    }
    config.client_certificate = TRY(reader.pem(user, "client-certificate", where));
    config.client_key = TRY(reader.pem(user, "client-key", where));
    if (config.client_certificate.empty() != config.client_key.empty()) {
        return reader.bad(where, config.client_key.empty()
                                     ? "client-certificate without client-key"
                                     : "client-key without client-certificate");
    }
    if (config.token.empty() && config.token_file.empty() && config.client_certificate.empty()) {
        return reader.bad(where, "no credentials: give token, tokenFile or client-certificate "
                                 "and client-key");
    }
    return {};
}

} // namespace

util::Expected<KubeConfig> parse_kubeconfig(const std::string& text,
                                            const std::filesystem::path& file) {
    Reader reader(file);
    YAML::Node top;
    try {
        top = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        return util::fail(ErrorCode::invalid_input,
                          "kubeconfig " + file.string() + ": not valid YAML at line " +
                              std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!top.IsMap()) {
        return reader.bad("the top level", "must be a mapping (is this a kubeconfig?)");
    }
    KubeConfig config;
    config.source = file;
    try {
        config.context = TRY(reader.text(top, "current-context", ""));
        if (config.context.empty()) {
            return reader.bad("current-context", "missing; name the context to use");
        }
        auto [context, context_where] =
            TRY(reader.named(top, "contexts", "context", config.context, "current-context"));
        std::string cluster_name = TRY(reader.text(context, "cluster", context_where));
        std::string user_name = TRY(reader.text(context, "user", context_where));
        config.namespace_name = TRY(reader.text(context, "namespace", context_where));
        if (cluster_name.empty()) {
            return reader.bad(context_where + ".cluster", "missing");
        }
        if (user_name.empty()) {
            return reader.bad(context_where + ".user", "missing");
        }
        auto [cluster, cluster_where] =
            TRY(reader.named(top, "clusters", "cluster", cluster_name, context_where + ".cluster"));
        TRY(read_cluster(reader, cluster, cluster_where, config));
        auto [user, user_where] =
            TRY(reader.named(top, "users", "user", user_name, context_where + ".user"));
        TRY(read_user(reader, user, user_where, config));
    } catch (const YAML::Exception& e) { // yaml-cpp throws on shapes we did not foresee
        return reader.bad("line " + std::to_string(e.mark.line + 1), e.msg);
    }
    return config;
}

util::Expected<KubeConfig> load_kubeconfig(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) {
        return std::unexpected(util::Error::from_errno(
            ErrorCode::not_found, "cannot read kubeconfig " + file.string(), errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse_kubeconfig(text.str(), file);
}

} // namespace shimkeeper::kubeapi
