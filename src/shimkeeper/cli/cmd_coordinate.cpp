// `shimkeeper coordinate`: the cluster-wide side of cluster mode, under an identity of its own
// (ServiceAccount shimkeeper-system/shimkeeper-coordinator), typically on control-plane machines
// (units/shimkeeper-coordinator.service). Node agents never coordinate: their credentials reach
// only their own Node and slot. Several may run; one leads through the Lease
// `shimkeeper-coordinator` (cluster/coordinator/coordinator.hpp), the others stand by with one
// watch each.
//
// It reads only `[kube] kubeconfig` and `namespace` from the -c file; without a kubeconfig, in a
// Pod, the in-cluster configuration (the mounted ServiceAccount token, re-read as it rotates). With
// --listen it serves probes and /metrics from a thread of its own (coordinator_endpoints.hpp). The
// loop is the coordinator's own curl-multi loop, turned in slices of at most 200 ms so that SIGTERM
// and the systemd watchdog are served between them; a round's or a pass's blocking REST calls ping
// the watchdog before each request, and a pass stops at its first unanswered one (see WatchdogSec
// in units/shimkeeper-coordinator.service).
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/coordinator_endpoints.hpp"
#include "shimkeeper/cluster/coordinator/coordinator.hpp"
#include "shimkeeper/daemon/daemon.hpp"
#include "shimkeeper/httpserve/endpoint_server.hpp"
#include "shimkeeper/kubeapi/in_cluster.hpp"
#include "shimkeeper/spec/settings_file.hpp"

#include <csignal>
#include <cstring>
#include <iostream>
#include <random>
#include <systemd/sd-daemon.h>
#include <unistd.h>

namespace shimkeeper::cli {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int signal) {
    g_stop_signal = signal;
}

// client-go's habit: the host's name plus a random part, so that two coordinators on one
// machine (or a restarted one) are never taken for each other.
std::string candidate_identity() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::random_device random;
    char suffix[9];
    std::snprintf(suffix, sizeof suffix, "%08x", random());
    return std::string(host) + "_" + suffix;
}

// [kube] kubeconfig from the -c file (required when named; the default file may be absent, as in
// a container), else the in-cluster configuration (kubeapi/in_cluster.hpp), whose namespace is
// the Pod's own.
util::Expected<std::pair<kubeapi::KubeConfig, std::string>>
coordinator_credentials(const GlobalOptions& options) {
    const bool named = !options.config.empty();
    const std::filesystem::path file = named ? std::filesystem::path(options.config)
                                             : std::filesystem::path(k_default_agent_config);
    const spec::AgentSettings settings = TRY(spec::load_agent_settings(file, named));
    std::optional<std::filesystem::path> kubeconfig;
    std::string ns = spec::KubeSettings{}.namespace_name;
    if (settings.kube) {
        ns = settings.kube->namespace_name;
        if (settings.kube->kubeconfig) {
            kubeconfig = *settings.kube->kubeconfig;
        }
    }
    std::error_code ec;
    const std::string sought = std::filesystem::exists(file, ec)
                                   ? file.string() +
                                         " names no [kube] kubeconfig (the credential of "
                                         "shimkeeper-system/shimkeeper-coordinator)"
                                   : "no " + file.string() + " to name a [kube] kubeconfig";
    kubeapi::KubeConfig config = TRY(kubeapi::kubeconfig_or_in_cluster(
        kubeconfig, sought, kubeapi::InClusterEnvironment::from_process()));
    if (!kubeconfig) {
        ns = config.namespace_name; // the Pod's: where its Lease and the slots live
    }
    return std::pair{std::move(config), ns};
}

util::Expected<int> coordinate(const GlobalOptions& options, const std::string& identity,
                               const std::string& listen) {
    const util::Log log = log_of(options);
    std::optional<httpserve::ListenAddress> address;
    if (!listen.empty()) {
        address = TRY(httpserve::parse_listen_address(listen, "--listen"));
    }
    auto [config, ns] = TRY(coordinator_credentials(options));
    log.info("coordinator: API server " + config.server + " (" +
             (config.context == "in-cluster"
                  ? "in-cluster configuration from " + config.source.string()
                  : "kubeconfig " + config.source.string()) +
             ")");
    kubeapi::Client client(std::move(config));
    auto requests = std::make_shared<kubeapi::RequestStats>();
    client.connection().set_stats(requests);
    CoordinatorBoard board;
    std::unique_ptr<httpserve::EndpointServer> endpoints;
    if (address) {
        endpoints =
            TRY(httpserve::EndpointServer::start(*address, coordinator_routes(board, *requests)));
        log.info("coordinator: serving /healthz, /readyz and /metrics on " + listen);
    }
    auto loop = TRY(kubeapi::CurlEventLoop::create());
    cluster::coordinator::CoordinatorSettings coordinator_settings;
    coordinator_settings.ns = ns;
    coordinator_settings.identity = identity.empty() ? candidate_identity() : identity;
    // A pass's writes block the loop: each request is bounded by a quarter of WatchdogSec
    // (kubeapi/request_bound.hpp) and pings the watchdog first.
    coordinator_settings.heartbeat = [&board] {
        daemon::watchdog_keepalive();
        board.mark_progress();
    };
    cluster::coordinator::Coordinator coordinator(
        *loop, client, coordinator_settings,
        {"shimkeeper.containerd.x-k8s.io/coordinator", coordinator_settings.identity}, log);

    struct sigaction action = {};
    action.sa_handler = on_stop_signal;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    TRY(coordinator.start());
    board.publish(reading_of(coordinator));
    log.info("coordinator: " + coordinator_settings.identity + " stands for Lease " +
             coordinator_settings.ns + "/" + coordinator_settings.lease_name);
    sd_notify(0, "READY=1\nSTATUS=standing by");
    bool leading = false;
    while (g_stop_signal == 0) {
        TRY(loop->run_once(std::chrono::milliseconds(200)));
        sd_notify(0, "WATCHDOG=1"); // the loop turned: no request is stuck on it
        board.mark_progress();
        board.publish(reading_of(coordinator));
        if (coordinator.leading() != leading) {
            leading = coordinator.leading();
            sd_notify(0, leading ? "STATUS=leading" : "STATUS=standing by");
        }
    }
    sd_notify(0, "STOPPING=1");
    log.info(std::string("coordinator: stopping on ") + strsignal(g_stop_signal) +
             ", giving the Lease up");
    // Another coordinator takes over at once instead of after the lease runs out.
    if (auto released = coordinator.release(); !released) {
        log.warning("coordinator: " + released.error().message());
    }
    return 0;
}

} // namespace

int run_coordinate_command(const GlobalOptions& options, const std::string& identity,
                           const std::string& listen) {
    auto ran = coordinate(options, identity, listen);
    if (!ran) {
        std::cerr << "shimkeeper coordinate: " << ran.error().message() << "\n";
        return ran.error().exit_code();
    }
    return *ran;
}

} // namespace shimkeeper::cli
