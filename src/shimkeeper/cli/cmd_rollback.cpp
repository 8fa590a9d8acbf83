// `shimkeeper rollback`: back to the generation before the current one, with the same
// guarantees as apply (journal, restart, health check, roll back the rollback if unhealthy).
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/metrics_report.hpp"
#include "shimkeeper/cli/node_edges.hpp"
#include "shimkeeper/cli/transaction_report.hpp"
#include "shimkeeper/reconcile/record.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/transaction.hpp"

namespace shimkeeper::cli {

namespace {

// The generation before the current one; refused (exit 2) when there is none.
util::Expected<const store::Generation*> previous_of(const store::StoreState& state) {
    const store::Generation* current = state.current_generation();
    const store::Generation* previous = nullptr;
    for (const auto& generation : state.generations) {
        if (current != nullptr && generation.number < current->number) {
            previous = &generation;
        }
    }
    if (previous == nullptr) {
        return util::fail(util::ErrorCode::invalid_input,
                          current ? "generation " + std::to_string(current->number) +
                                        " is the oldest one kept; there is nothing to roll back to"
                                  : std::string("nothing is installed; there is nothing to roll "
                                                "back to"));
    }
    return previous;
}

util::Expected<int> roll_back(Context& ctx, reconcile::Restart restart) {
    // Refused before the lock is taken: bad input writes nothing, not even the lock file.
    const auto before = TRY(ctx.store.load_state());
    TRY(previous_of(before));
    const auto lock = TRY(lock_node(ctx, "shimkeeper rollback"));
    auto edges = TRY(NodeEdges::open(ctx, restart));
    auto node = edges->node();
    TRY(reconcile::recover(node, restart));
    auto state = TRY(ctx.store.load_state()); // again: another run may have committed meanwhile
    const store::Generation* current = state.current_generation();
    const store::Generation* previous = TRY(previous_of(state));
    auto target = TRY(reconcile::specs_of(*previous));
    const TransactionClock clock;
    auto executed = reconcile::execute(node, target, "rollback", restart, previous->number);
    report_metrics(ctx, executed, clock);
    auto outcome = TRY(std::move(executed));
    print_outcome(ctx, outcome, restart);
    if (outcome.exit_code() == 0) {
        ctx.log.info("note: the desired-state files still declare what generation " +
                     std::to_string(current->number) +
                     " held; the next apply (or the daemon) returns to it unless they change");
    }
    return outcome.exit_code();
}

} // namespace

int run_rollback_command(const GlobalOptions& options, reconcile::Restart restart) {
    return run_with_context(options, [restart](Context& ctx) { return roll_back(ctx, restart); });
}

} // namespace shimkeeper::cli
