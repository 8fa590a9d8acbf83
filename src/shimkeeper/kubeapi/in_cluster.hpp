// Where a client finds its API server when no kubeconfig is given: inside a Pod, the way
// client-go's rest.InClusterConfig does. The kubelet puts KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT into every container's environment and mounts the Pod's
// ServiceAccount at /var/run/secrets/kubernetes.io/serviceaccount: `token` (a projected token
// the kubelet rotates in place, so it is named as a tokenFile and re-read: bearer_token.hpp),
// `ca.crt` and `namespace`.
//
// The folder can be moved with SHIMKEEPER_SERVICE_ACCOUNT_DIR, so that tests run the same code
// against a folder of their own.
#pragma once

#include "shimkeeper/kubeapi/kubeconfig.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace shimkeeper::kubeapi {

inline constexpr const char* k_service_account_dir =
    "/var/run/secrets/kubernetes.io/serviceaccount";
inline constexpr const char* k_service_account_dir_variable = "SHIMKEEPER_SERVICE_ACCOUNT_DIR";

// What a Pod's environment says; read once from the process (from_process) or made by a test.
struct InClusterEnvironment {
    std::optional<std::string> service_host; // KUBERNETES_SERVICE_HOST, nullopt when unset
    std::optional<std::string> service_port; // KUBERNETES_SERVICE_PORT
    std::filesystem::path account_dir = k_service_account_dir;

    static InClusterEnvironment from_process();
    // Either variable set: the process was meant to run in a Pod (half a setting is an error).
    bool present() const { return service_host.has_value() || service_port.has_value(); }
};

// https://HOST:PORT (an IPv6 literal in brackets), the folder's ca.crt and token (a tokenFile),
// and its namespace. Refused, naming the variable or the file: a variable unset or empty, a port
// that is not 1-65535, a missing or empty ca.crt, token or namespace.
util::Expected<KubeConfig> in_cluster_config(const InClusterEnvironment& environment);

// The kubeconfig when one is given, else the in-cluster configuration when in a Pod, else one
// error naming both: `kubeconfig_sought` says where a kubeconfig was looked for.
util::Expected<KubeConfig>
kubeconfig_or_in_cluster(const std::optional<std::filesystem::path>& kubeconfig,
                         const std::string& kubeconfig_sought,
                         const InClusterEnvironment& environment);

} // namespace shimkeeper::kubeapi
