// The edges of one node that a transaction drives, gathered so that the business logic can be
// run against fakes (systemd, containerd's API, the downloader) while files stay real.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/health/containerd_client.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/systemd/restart_guard.hpp"
#include "shimkeeper/util/host_root.hpp"
#include "shimkeeper/util/log.hpp"

#include <functional>
#include <set>
#include <string>

namespace shimkeeper::reconcile {

struct NodePlan;

// Restart::no is `apply --no-restart` and `bake`: files change, containerd is left alone.
enum class Restart { yes, no };

struct Node {
    util::HostRoot root;
    const spec::AgentSettings& settings;
    const store::Store& store;
    const containerd::Detection& detection;
    fetch::Downloader& downloader;
    health::ContainerdClient* containerd = nullptr; // required with Restart::yes
    systemd::RestartGuard* restarts = nullptr;      // required with Restart::yes
    const util::Log& log;
    // Called during long steps (downloads, waiting for containerd): the daemon's watchdog ping.
    std::function<void()> heartbeat = {};
    // Asked during downloads: true stops them (staging ahead in the background, stage_ahead.hpp).
    std::function<bool()> abandon = {};
    // Called once the plan is final and containerd judged it, before the write-ahead (the config
    // backups, the journal) and the first change (cluster mode: the Node's label goes before the
    // handler does; the `installing` report takes the rollout slot). An error refuses the
    // transaction; nothing has changed.
    std::function<util::Expected<void>(const NodePlan&, const store::StoreState&)> before_change =
        {};
    // Called after the write-ahead, as the very last step before the first change: a check that
    // needs no request (cluster mode: every rollout slot held is still fresh). An error refuses
    // the transaction; nothing has changed.
    std::function<util::Expected<void>()> recheck_before_change = {};
    // Called when the transaction is refused for a reason about particular shims (one that could
    // not be staged, a config containerd refused with their change): cluster mode halts the
    // rollout of those Shims only (a refusal without this call is about none of them).
    std::function<void(const std::vector<std::string>& shims)> refused_about = {};
    // Artifacts the garbage collection after a commit keeps though no generation uses them:
    // cluster mode's staged ahead of a rollout slot (staged_ahead_digests), which would
    // otherwise be downloaded again when another Shim's transaction commits first.
    std::set<std::string> keep_artifacts = {};
};

} // namespace shimkeeper::reconcile
