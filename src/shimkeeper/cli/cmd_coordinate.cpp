// `shimkeeper coordinate`: the cluster-wide side of cluster mode, under an identity of its own
// (ServiceAccount shimkeeper-system/shimkeeper-coordinator), typically on control-plane machines
// (units/shimkeeper-coordinator.service). Node agents never coordinate: their credentials reach
// only their own Node and slot. Several may run; one leads through the Lease
// `shimkeeper-coordinator` (cluster/coordinator/coordinator.hpp), the others stand by with one
// watch each.
//
// It reads only `[kube] kubeconfig` and `namespace` from the -c file. The loop is the
// coordinator's own curl-multi loop, turned in slices of at most 200 ms so that SIGTERM and the
// systemd watchdog are served between them; a round's or a pass's blocking REST calls ping the
// watchdog before each request, and a pass stops at its first unanswered one (see WatchdogSec
// in units/shimkeeper-coordinator.service).
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cluster/coordinator/coordinator.hpp"
#include "shimkeeper/daemon/daemon.hpp"
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

util::Expected<int> coordinate(const GlobalOptions& options, const std::string& identity) {
    const util::Log log = log_of(options);
    const std::filesystem::path file = options.config.empty()
                                           ? std::filesystem::path(k_default_agent_config)
                                           : std::filesystem::path(options.config);
    const spec::AgentSettings settings = TRY(spec::load_agent_settings(file, true));
    if (!settings.kube || !settings.kube->kubeconfig) {
        return util::fail(util::ErrorCode::invalid_input,
                          file.string() + ": shimkeeper coordinate needs [kube] kubeconfig, the "
                                          "credential of shimkeeper-system/shimkeeper-coordinator");
    }
    kubeapi::Client client = TRY(kubeapi::Client::from_kubeconfig(*settings.kube->kubeconfig));
    auto loop = TRY(kubeapi::CurlEventLoop::create());
    cluster::coordinator::CoordinatorSettings coordinator_settings;
    coordinator_settings.ns = settings.kube->namespace_name;
    coordinator_settings.identity = identity.empty() ? candidate_identity() : identity;
    // A pass's writes block the loop: each request is bounded by a quarter of WatchdogSec
    // (kubeapi/request_bound.hpp) and pings the watchdog first.
    coordinator_settings.heartbeat = daemon::watchdog_keepalive;
    cluster::coordinator::Coordinator coordinator(
        *loop, client, coordinator_settings,
        {"shimkeeper.containerd.x-k8s.io/coordinator", coordinator_settings.identity}, log);

    struct sigaction action = {};
    action.sa_handler = on_stop_signal;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    TRY(coordinator.start());
    log.info("coordinator: " + coordinator_settings.identity + " stands for Lease " +
             coordinator_settings.ns + "/" + coordinator_settings.lease_name);
    sd_notify(0, "READY=1\nSTATUS=standing by");
    bool leading = false;
    while (g_stop_signal == 0) {
        TRY(loop->run_once(std::chrono::milliseconds(200)));
        sd_notify(0, "WATCHDOG=1"); // the loop turned: no request is stuck on it
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

int run_coordinate_command(const GlobalOptions& options, const std::string& identity) {
    auto ran = coordinate(options, identity);
    if (!ran) {
        std::cerr << "shimkeeper coordinate: " << ran.error().message() << "\n";
        return ran.error().exit_code();
    }
    return *ran;
}

} // namespace shimkeeper::cli
