#include "shimkeeper/cli/metrics_report.hpp"

#include "shimkeeper/metrics/textfile.hpp"

#include <optional>

namespace shimkeeper::cli {

namespace {

std::optional<metrics::TransactionRecord>
record_of(const util::Expected<reconcile::Outcome>& outcome, double seconds) {
    metrics::TransactionRecord record;
    record.duration_seconds = seconds;
    record.finished_unix =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (!outcome) {
        record.result = reconcile::to_string(reconcile::TxnResult::failed);
        return record;
    }
    if (!outcome->changed) {
        return std::nullopt;
    }
    record.result = reconcile::to_string(outcome->result);
    record.rolled_back = outcome->result == reconcile::TxnResult::rolled_back ||
                         outcome->result == reconcile::TxnResult::rollback_failed;
    record.restarts = outcome->restarts;
    return record;
}

std::uint64_t bytes_under(const std::filesystem::path& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) {
            total += it->file_size(ec);
        }
    }
    return total;
}

util::Expected<void> update(const Context& ctx,
                            const std::optional<metrics::TransactionRecord>& record) {
    const auto counters_file = ctx.store.state_dir() / "metrics.json";
    metrics::NodeMetrics node;
    node.counters = TRY(metrics::load_counters(counters_file));
    if (record) {
        metrics::count(node.counters, *record);
        TRY(metrics::save_counters(counters_file, node.counters));
    }
    if (!ctx.settings.metrics.enabled) {
        return {};
    }
    const auto dir = ctx.root.on_host(ctx.settings.metrics.textfile_dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        ctx.log.debug("metrics: " + dir.string() +
                      " does not exist (no node_exporter textfile collector); not written");
        return {};
    }
    const auto state = TRY(ctx.store.load_state());
    if (const auto* current = state.current_generation()) {
        node.shims_installed = current->shims.size();
    }
    for (const auto& digest : ctx.store.artifact_digests()) {
        node.store_bytes += bytes_under(ctx.store.artifact_dir(digest));
    }
    if (ctx.cluster) {
        const auto& reading = ctx.cluster->last_reading();
        node.cluster_connected = reading && reading->live;
    }
    TRY(metrics::write_textfile(dir, metrics::render_textfile(node)));
    return {};
}

} // namespace

void report_metrics(const Context& ctx, const util::Expected<reconcile::Outcome>& outcome,
                    const TransactionClock& clock) {
    if (auto updated = update(ctx, record_of(outcome, clock.seconds())); !updated) {
        ctx.log.warning("metrics: " + updated.error().message());
    }
}

} // namespace shimkeeper::cli
