// kube-probe's long-running commands, each on its own sd-event loop:
//
//   watch RES NS EVENTS DEADLINE-S [key=value...]   keys: label, field, timeout (min
//       timeoutSeconds), resume (a resourceVersion to start from instead of listing), own=1
//       (WatchSettings::own_connection), stream=1 (WatchSettings::stream_initial)
//     prints one line per event as it arrives: "SYNCED <count> <names...>", "ADDED <name>",
//     "MODIFIED <name>", "DELETED <name>", and "WATCHING <n>" when the n-th watch request starts
//     (rotation); after EVENTS event lines (SYNCED included) prints
//     "lists=<n> watches=<n> connections=<n> problem=<last problem>" and exits 0 (connections:
//     the TCP connections this process still has open); at the deadline exits 3.
//   lease NS NAME IDENTITY DURATION-S RUN-S
//     a leader-election candidate: a round every DURATION/3 s (at least 1 s); prints
//     "ROUND <n> <LEADER|FOLLOWER> <observed holder>" after each; on SIGTERM releases the lease
//     (if held), prints "RELEASED" and exits 0; exits 0 after RUN-S seconds without releasing.
//
//   event RES NS NAME TYPE REASON NOTE
//     reads the object and emits an events.k8s.io/v1 Event about it; prints the Event.
#include "kube_probe.hpp"

#include "shimkeeper/kubeapi/event_recorder.hpp"
#include "shimkeeper/kubeapi/leader_election.hpp"
#include "shimkeeper/kubeapi/watch.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

using namespace shimkeeper;

namespace {

using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> options_of(const std::vector<std::string>& args,
                                              std::size_t first) {
    std::map<std::string, std::string> options;
    for (std::size_t i = first; i < args.size(); ++i) {
        auto equals = args[i].find('=');
        options[args[i].substr(0, equals)] =
            equals == std::string::npos ? "" : args[i].substr(equals + 1);
    }
    return options;
}

// The established TCP connections this process holds: its socket inodes that
// /proc/self/net/tcp{,6} lists in state 01.
int open_tcp_connections() {
    std::set<std::string> inodes;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
        if (target.starts_with("socket:[")) {
            inodes.insert(target.substr(8, target.size() - 9));
        }
    }
    int count = 0;
    for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
        std::ifstream in(table);
        std::string line;
        std::getline(in, line); // the header
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
            fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
                timeout >> inode;
            count += state == "01" && inodes.contains(inode) ? 1 : 0;
        }
    }
    return count;
}

const char* kind_name(kubeapi::WatchEvent::Kind kind) {
    switch (kind) {
    case kubeapi::WatchEvent::Kind::synced:
        return "SYNCED";
    case kubeapi::WatchEvent::Kind::added:
        return "ADDED";
    case kubeapi::WatchEvent::Kind::modified:
        return "MODIFIED";
    case kubeapi::WatchEvent::Kind::deleted:
        return "DELETED";
    }
    return "?";
}

int watch_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    auto resource = probe_resource(args.at(1));
    if (!resource) {
        return probe_fail(resource.error());
    }
    std::string ns = args.at(2) == "-" ? "" : args.at(2);
    int wanted = std::stoi(args.at(3));
    auto deadline = Clock::now() + std::chrono::seconds(std::stoi(args.at(4)));
    auto options = options_of(args, 5);
    kubeapi::WatchSettings settings;
    settings.label_selector = options["label"];
    settings.field_selector = options["field"];
    settings.resume_from = options["resume"];
    settings.own_connection = options["own"] == "1";
    settings.stream_initial = options["stream"] == "1";
    settings.page_limit = 2; // several pages even for a handful of objects
    settings.backoff_initial = std::chrono::milliseconds(200);
    if (!options["timeout"].empty()) {
        settings.min_timeout = std::chrono::seconds(std::stoi(options["timeout"]));
    }
    auto loop = kubeapi::CurlEventLoop::create();
    if (!loop) {
        return probe_fail(loop.error());
    }
    int seen = 0;
    kubeapi::Watch watch(client.connection(), **loop, *resource, ns, settings,
                         [&](const kubeapi::WatchEvent& event) {
                             std::string line = kind_name(event.kind);
                             if (event.kind == kubeapi::WatchEvent::Kind::synced) {
                                 line += " " + std::to_string(event.items.size());
                                 for (const auto& item : event.items) {
                                     line += " " + item["metadata"].value("name", "");
                                 }
                             } else {
                                 line += " " + event.object["metadata"].value("name", "");
                             }
                             std::printf("%s\n", line.c_str());
                             std::fflush(stdout);
                             ++seen;
                         });
    if (auto started = watch.start(); !started) {
        return probe_fail(started.error());
    }
    unsigned watches_shown = 0;
    while (seen < wanted) {
        if (watch.state().watches_started() != watches_shown) {
            watches_shown = watch.state().watches_started();
            std::printf("WATCHING %u\n", watches_shown);
            std::fflush(stdout);
        }
        if (Clock::now() >= deadline) {
            std::fprintf(stderr, "kube-probe: deadline after %d of %d events; last problem: %s\n",
                         seen, wanted, watch.state().last_problem().c_str());
            return 3;
        }
        if (auto ran = (*loop)->run_once(std::chrono::milliseconds(200)); !ran) {
            return probe_fail(ran.error());
        }
    }
    std::printf("lists=%u watches=%u connections=%d problem=%s\n", watch.state().lists_started(),
                watch.state().watches_started(), open_tcp_connections(),
                watch.state().last_problem().c_str());
    return 0;
}

volatile std::sig_atomic_t g_terminated = 0;

int lease_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    kubeapi::LeaseSettings settings;
    settings.ns = args.at(1);
    settings.name = args.at(2);
    settings.identity = args.at(3);
    settings.lease_duration = std::chrono::seconds(std::stoi(args.at(4)));
    settings.renew_deadline = settings.lease_duration * 2 / 3;
    settings.retry_period = std::max(std::chrono::seconds(1), settings.lease_duration / 3);
    auto until = Clock::now() + std::chrono::seconds(std::stoi(args.at(5)));
    std::signal(SIGTERM, [](int) { g_terminated = 1; });
    kubeapi::LeaderElector elector(settings);
    for (unsigned round = 1; Clock::now() < until; ++round) {
        if (g_terminated != 0) {
            if (auto released = elector.release(client); !released) {
                return probe_fail(released.error());
            }
            std::printf("RELEASED\n");
            return 0;
        }
        auto leading = elector.try_acquire_or_renew(client);
        if (!leading) {
            std::fprintf(stderr, "round %u: %s\n", round, leading.error().message().c_str());
        }
        std::printf("ROUND %u %s %s\n", round, leading && *leading ? "LEADER" : "FOLLOWER",
                    elector.observed_holder().c_str());
        std::fflush(stdout);
        // The election's own period, not a wait for an outcome; SIGTERM cuts it short.
        for (auto end = Clock::now() + settings.retry_period;
             Clock::now() < end && g_terminated == 0;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    return 0;
}

int event_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    auto resource = probe_resource(args.at(1));
    if (!resource) {
        return probe_fail(resource.error());
    }
    std::string ns = args.at(2) == "-" ? "" : args.at(2);
    auto object = client.get(*resource, ns, args.at(3));
    if (!object) {
        return probe_fail(object.error());
    }
    kubeapi::EventRecorder recorder(client,
                                    {"shimkeeper.containerd.x-k8s.io/agent", "shimkeeper-probe"});
    auto type = args.at(4) == "Warning" ? kubeapi::EventType::warning : kubeapi::EventType::normal;
    auto event =
        recorder.emit(kubeapi::ObjectReference::of(*object), type, args.at(5), "Probe", args.at(6));
    if (!event) {
        return probe_fail(event.error());
    }
    std::printf("%s\n", event->dump().c_str());
    return 0;
}

} // namespace

int probe_loop_command(kubeapi::Client& client, const std::vector<std::string>& args) {
    if (args[0] == "watch") {
        return watch_command(client, args);
    }
    if (args[0] == "lease") {
        return lease_command(client, args);
    }
    if (args[0] == "event") {
        return event_command(client, args);
    }
    std::fprintf(stderr, "kube-probe: %s is not built yet\n", args[0].c_str());
    return 2;
}
