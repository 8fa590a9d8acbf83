// `shimkeeper run`: the daemon. Each reconcile reloads the agent settings and reads the
// desired-state sources afresh (files may have changed) and runs the same transaction as
// `apply`; the loop itself lives in daemon/. Recovery needs only the settings, so a broken
// drop-in never leaves an interrupted transaction unrecovered.
#include "shimkeeper/cli/cluster_transaction.hpp"
#include "shimkeeper/cli/cluster_watches.hpp"
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/metrics_report.hpp"
#include "shimkeeper/cli/node_edges.hpp"
#include "shimkeeper/cli/status_cluster.hpp"
#include "shimkeeper/cli/status_daemon.hpp"
#include "shimkeeper/cli/transaction_report.hpp"
#include "shimkeeper/cluster/agent/transaction_hooks.hpp"
#include "shimkeeper/daemon/daemon.hpp"
#include "shimkeeper/daemon/status_text.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/reconcile/background_staging.hpp"
#include "shimkeeper/reconcile/node_status.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/removal_guard.hpp"
#include "shimkeeper/reconcile/stage_ahead.hpp"
#include "shimkeeper/reconcile/transaction.hpp"

namespace shimkeeper::cli {

namespace {

daemon::ReconcileOutcome failed(const util::Error& error) {
    return {false, false, error.message(), {{"error", error.message()}}};
}

// Each attempt loads the settings afresh and opens the node's edges for them.
using NodeStep =
    std::function<daemon::ReconcileOutcome(Context&, const reconcile::Node&, reconcile::Restart)>;

daemon::ReconcileOutcome on_node(const GlobalOptions& options,
                                 cluster::agent::AgentWatches* watches, reconcile::Restart restart,
                                 const NodeStep& step) {
    auto ctx = make_context(options);
    if (!ctx) {
        return failed(ctx.error());
    }
    if (ctx->cluster && watches != nullptr) {
        ctx->cluster->set_feed(watches->feed());
        ctx->cluster->assume_identity(watches->node_name(), watches->node_name_origin());
    }
    if (ctx->cluster) {
        ctx->cluster->set_heartbeat(daemon::watchdog_keepalive); // between the pass's requests
    }
    // Held for this attempt only: a manual apply waits at most one reconcile, never an idle loop.
    auto lock = lock_node(*ctx, "shimkeeper run", daemon::watchdog_keepalive);
    if (!lock) {
        return failed(lock.error());
    }
    auto edges = NodeEdges::open(*ctx, restart);
    if (!edges) {
        return failed(edges.error());
    }
    reconcile::Node node = (*edges)->node();
    node.heartbeat = daemon::watchdog_keepalive; // downloads and health waits can be long
    return step(*ctx, node, restart);
}

daemon::ReconcileOutcome recover_once(Context&, const reconcile::Node& node,
                                      reconcile::Restart restart) {
    auto recovery = reconcile::recover(node, restart);
    if (!recovery) {
        return failed(recovery.error());
    }
    std::string summary = recovery->needed ? "recovered transaction " + recovery->entry.id + ": " +
                                                 recovery->entry.reason
                                           : "no interrupted transaction";
    return {true, recovery->needed, summary, {{"recovery", summary}}};
}

// The rollout gate's waits the node asks slots for: all but the Shims still staging ahead.
std::map<std::string, std::optional<cluster::model::RolloutTarget>>
slots_to_ask(const cluster::agent::RolloutGate* gate, const std::set<std::string>& staging) {
    if (gate == nullptr) {
        return {};
    }
    auto waiting = gate->waiting_for();
    std::erase_if(waiting, [&](const auto& wait) { return staging.contains(wait.first); });
    return waiting;
}

daemon::ReconcileOutcome reconcile_once(Context& ctx, const reconcile::Node& edges,
                                        reconcile::Restart restart,
                                        cluster::agent::AgentWatches* watches,
                                        reconcile::BackgroundStaging* staging) {
    if (ctx.cluster) {
        ctx.cluster->remember_readings();
    }
    auto desired = ctx.load_desired();
    auto report = cluster_report_for(ctx);
    if (!desired) {
        if (report) {
            if (auto told = report->after_invalid(); !told) {
                ctx.log.warning(told.error().message());
            }
        }
        // Still recover whatever a crash left behind: that needs no desired state.
        auto recovered = recover_once(ctx, edges, restart);
        if (!recovered.ok) {
            return recovered;
        }
        return failed(desired.error());
    }
    reconcile::Node node = edges;
    // Slots the watches took since the last reconcile; kept for the next one while there is no
    // reading to judge them by (rollout_gate_for makes no gate then).
    const bool judged = watches != nullptr && ctx.cluster && ctx.cluster->last_reading();
    cluster::agent::TransactionHooks hooks(std::move(report), [&] {
        return rollout_gate_for(ctx, restart, watches ? &watches->slots() : nullptr,
                                judged ? watches->take_claimed() : cluster::agent::ClaimedSlots{});
    });
    auto admitted = hooks.admit(node, *desired);
    if (!admitted) {
        return failed(admitted.error());
    }
    desired = std::move(*admitted);
    cluster::agent::RolloutGate* gate = hooks.gate();
    const bool stage_ahead = gate != nullptr && staging != nullptr && ctx.settings.kube &&
                             ctx.settings.kube->stage_ahead;
    if (stage_ahead) {
        node.keep_artifacts = reconcile::staged_ahead_digests(node, gate->worth_staging_ahead());
    }
    const TransactionClock clock;
    auto outcome = reconcile::execute(node, desired->shims, "apply", restart);
    // After the transaction: a Shim whose slot was lost before the point of no return waits too.
    const std::map<std::string, std::string>& waiting = hooks.finish(outcome);
    // Before the Node report, which asks for the slots: a slot comes only to a node that has its
    // artifacts and holds it for the change alone. The downloads run on staging's own thread, so
    // this loop goes on answering; when one ends, staging's change source wakes it to ask.
    const std::set<std::string> still_staging =
        stage_ahead ? staging->stage(node, gate->worth_staging_ahead()) : std::set<std::string>{};
    if (watches != nullptr) {
        watches->wait_for(slots_to_ask(gate, still_staging),
                          gate ? gate->held_shims() : std::set<std::string>{});
    }
    report_metrics(ctx, outcome, clock);
    auto state = ctx.store.load_state();
    if (!state) {
        return failed(state.error());
    }
    // The Node is told even after a failure; a Node that could not be told makes the attempt a
    // failure, so the daemon tries again (with backoff) until the cluster knows.
    const util::Expected<void> told =
        hooks.tell(*desired, outcome, restart,
                   watches != nullptr ? std::optional(watches->requests()) : std::nullopt);
    if (!outcome) {
        return failed(outcome.error());
    }
    if (outcome->recovered) {
        ctx.log.warning("recovered interrupted transaction " + outcome->recovered->id + ": " +
                        outcome->recovered->reason);
    }
    const reconcile::NodeStatus status = reconcile::node_status(*outcome, *state);
    auto status_json = node_status_to_json(status);
    if (ctx.cluster && ctx.cluster->last_reading()) {
        // What this pass's requests said of the API server (request_bound.hpp), for the log
        // and status.json; `status` reads the same from the memory.
        if (auto outage = ctx.cluster->settle_pass(); !outage) {
            ctx.log.warning(outage.error().message());
        } else if (!outage->empty()) {
            ctx.log.warning("cluster: " + *outage);
        }
        status_json["cluster"] = cluster_connection_json(*ctx.cluster->last_reading());
    }
    if (outcome->exit_code() != 0) {
        return {false, outcome->changed, outcome->reason, status_json};
    }
    if (!told) {
        return {false, outcome->changed, told.error().message(), status_json};
    }
    std::vector<std::string> handlers;
    for (const auto& shim : status.installed) {
        handlers.push_back(shim.handler);
    }
    std::string summary =
        daemon::converged_status(handlers, static_cast<std::uint64_t>(status.generation));
    for (const auto& [name, wait] : waiting) {
        // The gate's reason says the slot is requested; a Shim still staging has not asked yet.
        const std::string why =
            still_staging.contains(name)
                ? "staging the artifact of Shim/" + name +
                      " ahead of its rollout slot; this node asks for the slot once it is stored"
                : wait;
        ctx.log.info("rollout: " + why, {.shim = name});
        summary += "; " + why;
        status_json[k_result_waiting][name] = why;
    }
    for (const auto& [name, removal] : hooks.blocked()) {
        summary += "; removal of " + name + " " + removal.reason;
        status_json[k_result_blocked][name] = removal.reason;
    }
    daemon::ReconcileOutcome done{true, outcome->changed, summary, status_json};
    if (!hooks.blocked().empty()) {
        // Pods ending change nothing the daemon watches: look again soon (removal_guard.hpp).
        done.recheck_after = reconcile::k_blocked_removal_recheck;
    }
    return done;
}

} // namespace

int run_run_command(const GlobalOptions& options, const std::string& status_file,
                    reconcile::Restart restart) {
    // No desired state is loaded here: a broken file must not keep the daemon from starting
    // (systemd would restart it in a loop); each reconcile loads it and reports failures.
    const util::HostRoot root = host_root_of(options);
    const std::filesystem::path agent_config = agent_config_of(options, root);
    const util::Log log = log_of(options);
    daemon::DaemonConfig config;
    config.watch_paths = {agent_config, agent_config.parent_path() / "shims.d"};
    config.status_file = root.on_host(status_file);
    auto started = start_cluster_watches(options, log);
    if (!started) {
        log.error(started.error().message());
        return 1;
    }
    cluster::agent::AgentWatches* watches = started->get();
    std::unique_ptr<reconcile::BackgroundStaging> staging;
    if (watches != nullptr) {
        config.change_sources.push_back(change_source_of(*watches));
        staging = std::make_unique<reconcile::BackgroundStaging>(log, [] {
            return std::make_unique<fetch::CurlDownloader>(fetch::progress_style_for_stderr());
        });
        // A staging that ended lets the node ask for that Shim's slot: at once, no debounce.
        config.change_sources.push_back({.fd = staging->fd(),
                                         .name = "staging ahead",
                                         .on_ready = [&staging] { return staging->take_ended(); },
                                         .urgent = [] { return true; },
                                         .debounce = std::nullopt});
    }
    const NodeStep reconcile_step = [watches, &staging](Context& ctx, const reconcile::Node& node,
                                                        reconcile::Restart how) {
        return reconcile_once(ctx, node, how, watches, staging.get());
    };
    return daemon::run_daemon(
        config,
        [&options, watches, restart] { return on_node(options, watches, restart, recover_once); },
        [&options, watches, restart, &reconcile_step] {
            return on_node(options, watches, restart, reconcile_step);
        },
        log);
}

} // namespace shimkeeper::cli
