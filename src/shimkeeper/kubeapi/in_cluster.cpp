#include "shimkeeper/kubeapi/in_cluster.hpp"

#include "shimkeeper/util/fs.hpp"

#include <charconv>
#include <cstdlib>

namespace shimkeeper::kubeapi {

namespace {

using util::ErrorCode;

std::optional<std::string> variable(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

// A file of the ServiceAccount folder that must be there and say something.
util::Expected<std::string> account_file(const std::filesystem::path& dir, const char* name) {
    const std::filesystem::path file = dir / name;
    auto text = util::read_file(file);
    if (!text) {
        return util::fail(ErrorCode::invalid_input,
                          "in-cluster configuration: cannot read " + file.string() +
                              " (is a ServiceAccount token mounted? automountServiceAccountToken "
                              "must not be false)");
    }
    while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) {
        text->pop_back();
    }
    if (text->empty()) {
        return util::fail(ErrorCode::invalid_input,
                          "in-cluster configuration: " + file.string() + " is empty");
    }
    return *text;
}

util::Expected<std::string> server_of(const InClusterEnvironment& environment) {
    const auto missing = [](const char* name) {
        return util::fail(ErrorCode::invalid_input,
                          std::string("in-cluster configuration: ") + name +
                              " is not set (the kubelet sets KUBERNETES_SERVICE_HOST and "
                              "KUBERNETES_SERVICE_PORT together)");
    };
    if (!environment.service_host || environment.service_host->empty()) {
        return missing("KUBERNETES_SERVICE_HOST");
    }
    if (!environment.service_port || environment.service_port->empty()) {
        return missing("KUBERNETES_SERVICE_PORT");
    }
    const std::string& port = *environment.service_port;
    unsigned number = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535) {
        return util::fail(ErrorCode::invalid_input, "in-cluster configuration: "
                                                    "KUBERNETES_SERVICE_PORT=\"" +
                                                        port + "\" is not a port (1-65535)");
    }
    std::string host = *environment.service_host;
    if (host.find(':') != std::string::npos && !host.starts_with('[')) {
        host = "[" + host + "]"; // an IPv6 literal, as net.JoinHostPort writes it
    }
    return "https://" + host + ":" + port;
}

} // namespace

InClusterEnvironment InClusterEnvironment::from_process() {
    InClusterEnvironment environment;
    environment.service_host = variable("KUBERNETES_SERVICE_HOST");
    environment.service_port = variable("KUBERNETES_SERVICE_PORT");
    if (auto dir = variable(k_service_account_dir_variable); dir && !dir->empty()) {
        environment.account_dir = *dir;
    }
    return environment;
}

util::Expected<KubeConfig> in_cluster_config(const InClusterEnvironment& environment) {
    KubeConfig config;
    config.server = TRY(server_of(environment));
    config.source = environment.account_dir;
    config.context = "in-cluster";
    TRY(account_file(environment.account_dir, "ca.crt"));
    config.certificate_authority.file = environment.account_dir / "ca.crt";
    // Checked now so that a Pod without a token fails at start with the file named; read again
    // at every request (and re-read as the kubelet rotates it) through the tokenFile.
    TRY(account_file(environment.account_dir, "token"));
    config.token_file = environment.account_dir / "token";
    config.token_file_kind = "the ServiceAccount token";
    config.namespace_name = TRY(account_file(environment.account_dir, "namespace"));
    return config;
}

util::Expected<KubeConfig>
kubeconfig_or_in_cluster(const std::optional<std::filesystem::path>& kubeconfig,
                         const std::string& kubeconfig_sought,
                         const InClusterEnvironment& environment) {
    if (kubeconfig) {
        return load_kubeconfig(*kubeconfig);
    }
    if (environment.present()) {
        return in_cluster_config(environment);
    }
    return util::fail(ErrorCode::invalid_input,
                      "no Kubernetes credentials: " + kubeconfig_sought +
                          ", and this is not a Pod (KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT are not set, so the in-cluster configuration "
                          "from " +
                          environment.account_dir.string() + " does not apply)");
}

} // namespace shimkeeper::kubeapi
