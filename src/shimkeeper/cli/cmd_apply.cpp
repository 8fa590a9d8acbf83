// `shimkeeper apply`: one reconcile, then exit. 0 converged, 1 failed (and rolled back),
// 2 bad input. `--no-restart` edits files and leaves the restart to the operator.
#include "shimkeeper/cli/cluster_transaction.hpp"
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/metrics_report.hpp"
#include "shimkeeper/cli/node_edges.hpp"
#include "shimkeeper/cli/transaction_report.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/removal_guard.hpp"
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
    if (report) {
        report->attach(node);
    }
    // Before the gate: a removal that waits for pods takes no rollout slot.
    const reconcile::GuardedDesired guarded = TRY(reconcile::guard_removals(node, *desired));
    desired = guarded.desired;
    // No watch here: the slots are read once; a Shim whose turn has not come stays as it is.
    auto gate = TRY(rollout_gate_for(ctx, restart, nullptr));
    std::map<std::string, std::string> waiting;
    if (gate) {
        desired = TRY(gate->admit(*desired));
        gate->attach(node);
    }
    const TransactionClock clock;
    auto outcome = reconcile::execute(node, desired->shims, "apply", restart);
    if (gate) {
        gate->finish(outcome);
        waiting = gate->waiting(); // a slot lost before the point of no return waits too
    }
    report_metrics(ctx, outcome, clock);
    if (report) {
        warn_if_failed(ctx, report->after(*desired, outcome, restart, waiting, guarded.blocked));
    }
    for (const auto& [name, why] : waiting) {
        ctx.log.warning("not converged: " + why, {.shim = name});
    }
    for (const auto& [name, blocked] : guarded.blocked) {
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
