// `shimkeeper reset`: gives the node back as it was before shimkeeper. It is an ordinary
// transaction towards an empty desired set (so every managed block, created drop-in and bin/
// link goes, with one restart, the health check and a rollback on failure, exactly as apply),
// followed by the deletion of the whole store and of node_exporter's shimkeeper.prom. Package
// purge relies on it: once the store is gone, nothing on the node points at shimkeeper any more.
//
// Decisions: the desired-state files are not read (a broken or still-populated shims.d/ must not
// stop a reset) and not removed (they are the operator's; a running daemon would re-apply them,
// so stop it first). The store is kept when a process still runs a stored shim binary, because
// containerd runs that binary again to clean up its container; reset then exits 1 and a second
// reset, once those containers are gone, finds nothing managed and removes the store.
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/node_edges.hpp"
#include "shimkeeper/cli/transaction_report.hpp"
#include "shimkeeper/metrics/textfile.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/store/running_binaries.hpp"
#include "shimkeeper/util/fs.hpp"

#include <filesystem>

namespace shimkeeper::cli {

namespace {

// The store folder as this process sees it (under --root).
std::filesystem::path store_dir(const Context& ctx) {
    return ctx.root.on_host(ctx.store.node_dir());
}

// Deletes the store folder; refused for a path that cannot be a store of its own. The node lock's
// file goes with it: the lock is held through its open fd until this command exits.
util::Expected<void> remove_store(const Context& ctx) {
    const auto dir = store_dir(ctx);
    if (dir.empty() || dir == dir.root_path() || dir == ctx.root.on_host("/")) {
        return util::fail(util::ErrorCode::invalid_input,
                          "refusing to delete the store folder " + dir.string() +
                              ": set [store] dir to a folder of its own");
    }
    TRY(util::remove_all(dir));
    return {};
}

util::Expected<int> reset_node(Context& ctx, reconcile::Restart restart) {
    const auto lock = TRY(lock_node(ctx, "shimkeeper reset"));
    auto edges = TRY(NodeEdges::open(ctx, restart));
    auto node = edges->node();
    auto recovery = TRY(reconcile::recover(node, restart));
    if (recovery.needed) {
        ctx.log.warning("recovered interrupted transaction " + recovery.entry.id + ": " +
                        recovery.entry.reason);
    }
    auto outcome = TRY(reconcile::execute(node, {}, "reset", restart));
    print_outcome(ctx, outcome, restart);
    if (outcome.exit_code() != 0) {
        ctx.log.error("reset failed and was rolled back; the store is kept");
        return outcome.exit_code();
    }
    const auto in_use = store::artifacts_in_use(store_dir(ctx) / "store" / "sha256");
    if (!in_use.empty()) {
        ctx.log.error("containerd no longer uses any shimkeeper shim, but " +
                      std::to_string(in_use.size()) +
                      " stored shim(s) still run for existing containers; the store " +
                      store_dir(ctx).string() +
                      " is kept. Remove those containers, then run shimkeeper reset again.");
        return 1;
    }
    TRY(remove_store(ctx));
    // Its counters were in the store: left alone, node_exporter would serve the last numbers
    // (a shim installed) of a node that has none, even after the package is purged.
    TRY(metrics::remove_textfile(ctx.root.on_host(ctx.settings.metrics.textfile_dir)));
    ctx.log.info("removed the store " + store_dir(ctx).string() +
                 "; nothing on this node refers to shimkeeper any more");
    return 0;
}

} // namespace

int run_reset_command(const GlobalOptions& options, reconcile::Restart restart) {
    return run_with_context(options, [restart](Context& ctx) { return reset_node(ctx, restart); });
}

} // namespace shimkeeper::cli
