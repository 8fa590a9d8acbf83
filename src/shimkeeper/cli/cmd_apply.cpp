// `shimkeeper apply`: one reconcile, then exit. 0 converged, 1 failed (and rolled back),
// 2 bad input. `--no-restart` edits files and leaves the restart to the operator.
#include "shimkeeper/cli/cluster_transaction.hpp"
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/metrics_report.hpp"
#include "shimkeeper/cli/node_edges.hpp"
#include "shimkeeper/cli/transaction_report.hpp"
#include "shimkeeper/cluster/agent/transaction_hooks.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/transaction.hpp"

namespace shimkeeper::cli {

namespace {

// The node is what the transaction made it; a Node that could not be told is said, not fatal.
void warn_if_failed(const Context& ctx, const util::Expected<void>& reported) {
    if (!reported) {
        ctx.log.warning(reported.error().message());
    }
}

} // namespace

util::Expected<int> apply_desired_state(Context& ctx, reconcile::Restart restart) {
    if (ctx.cluster) {
        ctx.cluster->remember_readings();
    }
    // Bad input with nothing to recover is refused before the lock: it writes nothing at all.
    auto desired = ctx.load_desired();
    if (!desired && !reconcile::recovery_pending(ctx.store)) {
        return std::unexpected(desired.error());
    }
    const auto lock = TRY(lock_node(ctx, "shimkeeper apply"));
    auto edges = TRY(NodeEdges::open(ctx, restart));
    auto node = edges->node();
    // Recovery needs only the settings: an interrupted transaction is undone even when the
    // desired state has become unreadable since (that is then reported, exit 2).
    auto recovery = TRY(reconcile::recover(node, restart));
    if (recovery.needed) {
        ctx.log.warning("recovered interrupted transaction " + recovery.entry.id + ": " +
                        recovery.entry.reason);
    }
    auto report = cluster_report_for(ctx);
    if (!desired) {
        if (report) {
            warn_if_failed(ctx, report->after_invalid());
        }
        return std::unexpected(desired.error());
    }
    // No watch here: the slots are read once; a Shim whose turn has not come stays as it is.
    cluster::agent::TransactionHooks hooks(
        std::move(report), [&ctx, restart] { return rollout_gate_for(ctx, restart, nullptr); });
    desired = TRY(hooks.admit(node, *desired));
    const TransactionClock clock;
    auto outcome = reconcile::execute(node, desired->shims, "apply", restart);
    const std::map<std::string, std::string>& waiting = hooks.finish(outcome);
    report_metrics(ctx, outcome, clock);
    warn_if_failed(ctx, hooks.tell(*desired, outcome, restart));
    for (const auto& [name, why] : waiting) {
        ctx.log.warning("not converged: " + why, {.shim = name});
    }
    for (const auto& [name, blocked] : hooks.blocked()) {
        ctx.log.warning("not converged: removal of " + name + " waits, " + blocked.reason,
                        {.shim = name});
    }
    if (!outcome) {
        return std::unexpected(std::move(outcome.error()));
    }
    print_outcome(ctx, *outcome, restart);
    return outcome->exit_code();
}

int run_apply_command(const GlobalOptions& options, reconcile::Restart restart) {
    return run_with_context(options,
                            [restart](Context& ctx) { return apply_desired_state(ctx, restart); });
}

} // namespace shimkeeper::cli
