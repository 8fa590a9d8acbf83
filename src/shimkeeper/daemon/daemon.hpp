// `shimkeeper run` as a library: the sd-event loop that keeps the node converged. The node
// transaction is injected as two callbacks, so this folder depends on nothing but util.
//
// Lifecycle: block SIGTERM/SIGINT, watch the desired-state paths, call `recover` once, then
// `reconcile` once, then READY=1. Afterwards a reconcile runs on a debounced change of a watched
// path, on the jittered drift timer, or as the retry of a failed attempt. A failing desired state
// is retried with capped exponential backoff and never faster, changes included, so it cannot
// turn into a containerd restart storm.
//
// SIGTERM while a reconcile runs: the callback is synchronous and the signal stays blocked, so the
// transaction itself finishes (or rolls back) first; the loop then sees the signal, sends
// STOPPING=1 and run_daemon returns 0.
#pragma once

#include "shimkeeper/util/log.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::daemon {

struct ReconcileOutcome {
    bool ok = false;
    bool changed = false;
    // One line for systemd's STATUS=. When ok: what the node runs, e.g. converged_status(...);
    // when not ok: the reason only ("fetching spin-v2: HTTP 404 from https://..."); the daemon
    // adds "failing: " and the retry time itself.
    std::string summary;
    nlohmann::json status; // written under "result" in status.json
    // Waiting on something no watch sees (a removal blocked by pods): the next reconcile is due
    // after this at the latest, instead of the drift check's interval.
    std::optional<std::chrono::milliseconds> recheck_after = std::nullopt;
};

// A source of changes beside inotify (a Kubernetes watch connection in cluster mode). The caller
// builds it once and it outlives every reconcile; the loop calls `on_ready` whenever `fd` is
// readable, and a `true` answer ("the desired state may have changed") schedules a debounced
// reconcile like a file change does; if `urgent` then says true as well, the reconcile is due at
// once instead (a rollout slot came free: the source has jittered that moment itself, and half
// a second of debounce per slot would be most of a rollout's time). `debounce`, when set, is the
// source's own quiet time in place of the files' one. A failing daemon's backoff still applies.
struct ChangeSource {
    int fd = -1;
    std::string name; // for logs: "shims watch"
    std::function<bool()> on_ready;
    std::function<bool()> urgent = {};
    std::optional<std::chrono::milliseconds> debounce = std::nullopt;
};

struct DaemonConfig {
    // The agent config file and the shims.d/ directory (host paths). Their parent directories are
    // watched, not the paths themselves, so that an editor's rename-into-place is seen and a
    // shims.d/ created later starts being watched.
    std::vector<std::filesystem::path> watch_paths;
    std::filesystem::path status_file; // /run/shimkeeper/status.json (under --root when given)
    std::vector<ChangeSource> change_sources;
    std::chrono::milliseconds debounce{500};
    std::chrono::milliseconds drift_interval{300'000}; // jittered +-20%
    std::chrono::milliseconds backoff_initial{5'000}, backoff_max{300'000};
};

using ReconcileFn = std::function<ReconcileOutcome()>;

// Runs until SIGTERM or SIGINT, then returns 0; returns 1 when the loop cannot be set up or
// fails (the error is logged). Callbacks that throw count as a failed reconcile.
int run_daemon(const DaemonConfig& config, const ReconcileFn& recover, const ReconcileFn& reconcile,
               const util::Log& log);

// For long transaction steps (a slow download): tells systemd's watchdog the process is alive.
// Does nothing when not running under a watchdog.
void watchdog_keepalive();

} // namespace shimkeeper::daemon
