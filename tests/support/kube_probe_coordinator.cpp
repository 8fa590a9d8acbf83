// kube-probe's coordinator command: shimkeeper's coordinator on a loop of its own, as the daemon
// will run it, for tests/cluster/coordinator_*.sh.
//
//   coordinator NS IDENTITY RUN-S [lease=SECONDS]
//     a candidate for Lease shimkeeper-coordinator in NS (lease 15 s by default; a shorter one
//     makes takeover tests quick). Prints "LEADER <term>" and "FOLLOWER" when that changes, and
//     "PASS <n> writes=<total writes> failed=<failed passes>" after each reconcile pass; on
//     SIGTERM releases the Lease, prints "RELEASED" and exits 0; exits 0 after RUN-S seconds.
#include "kube_probe.hpp"

#include "shimkeeper/cluster/coordinator/coordinator.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>

using namespace shimkeeper;

namespace {

volatile std::sig_atomic_t g_terminated = 0;

} // namespace

int coordinator_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    using Clock = std::chrono::steady_clock;
    cluster::coordinator::CoordinatorSettings settings;
    settings.ns = args.at(1);
    settings.identity = args.at(2);
    const auto until = Clock::now() + std::chrono::seconds(std::stoi(args.at(3)));
    for (std::size_t i = 4; i < args.size(); ++i) {
        if (args[i].starts_with("lease=")) {
            int seconds = std::stoi(args[i].substr(6));
            settings.lease_duration = std::chrono::seconds(seconds);
            settings.renew_deadline = std::chrono::seconds(seconds * 2 / 3);
            settings.retry_period = std::chrono::seconds(std::max(1, seconds / 4));
        } else {
            std::fprintf(stderr, "kube-probe: unknown option %s\n", args[i].c_str());
            return 2;
        }
    }
    std::signal(SIGTERM, [](int) { g_terminated = 1; });
    auto loop = kubeapi::CurlEventLoop::create();
    if (!loop) {
        return probe_fail(loop.error());
    }
    cluster::coordinator::Coordinator coordinator(
        **loop, client, settings, {"shimkeeper.containerd.x-k8s.io/agent", settings.identity},
        util::Log(util::LogLevel::debug));
    if (auto started = coordinator.start(); !started) {
        return probe_fail(started.error());
    }
    bool leading = false;
    unsigned passes = 0;
    unsigned rounds = 0;
    std::printf("FOLLOWER\n");
    while (Clock::now() < until) {
        if (g_terminated != 0) {
            if (auto released = coordinator.release(); !released) {
                return probe_fail(released.error());
            }
            std::printf("RELEASED\n");
            return 0;
        }
        // Waits for the loop's next event at most this long, so SIGTERM is seen soon.
        if (auto ran = (*loop)->run_once(std::chrono::milliseconds(200)); !ran) {
            return probe_fail(ran.error());
        }
        const auto& stats = coordinator.stats();
        if (coordinator.leading() != leading) {
            leading = coordinator.leading();
            if (leading) {
                std::printf("LEADER %u\n", stats.terms);
            } else {
                std::printf("FOLLOWER\n");
            }
        }
        if (stats.rounds != rounds) {
            rounds = stats.rounds; // election rounds: a candidate's only Lease requests
            std::printf("ROUNDS %u\n", rounds);
        }
        if (stats.passes != passes) {
            passes = stats.passes;
            std::printf("PASS %u writes=%u failed=%u\n", passes, stats.writes, stats.failed_passes);
        }
        std::fflush(stdout);
    }
    return 0;
}
