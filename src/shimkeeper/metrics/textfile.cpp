#include "shimkeeper/metrics/textfile.hpp"

#include "shimkeeper/metrics/exposition.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <array>

namespace shimkeeper::metrics {

namespace {

// Every result a transaction can end with, always present (a rate() over a series that appears
// only at its first increment misses that increment).
constexpr std::array<const char*, 4> k_results = {"committed", "failed", "rolled-back",
                                                  "rollback-failed"};

} // namespace

std::string render_textfile(const NodeMetrics& m) {
    Exposition out;
    const Counters& c = m.counters;
    out.family("shimkeeper_shims_installed", "gauge", "Shims in the current generation.");
    out.sample("shimkeeper_shims_installed", static_cast<std::uint64_t>(m.shims_installed));

    out.family("shimkeeper_transactions_total", "counter",
               "Transactions that changed or tried to change the node, by result.");
    for (const char* result : k_results) {
        auto found = c.transactions.find(result);
        const std::uint64_t value = found == c.transactions.end() ? 0 : found->second;
        out.sample("shimkeeper_transactions_total", {{"result", result}}, value);
    }
    out.family("shimkeeper_rollbacks_total", "counter",
               "Transactions whose changes were rolled back.");
    out.sample("shimkeeper_rollbacks_total", c.rollbacks);
    out.family("shimkeeper_containerd_restarts_total", "counter",
               "containerd restarts made by shimkeeper (rollbacks included).");
    out.sample("shimkeeper_containerd_restarts_total", c.containerd_restarts);

    if (c.last) {
        out.family("shimkeeper_last_transaction_timestamp_seconds", "gauge",
                   "When the last transaction finished, seconds since the epoch.");
        out.sample("shimkeeper_last_transaction_timestamp_seconds", {}, c.last->finished_unix);
        out.family("shimkeeper_last_transaction_duration_seconds", "gauge",
                   "How long the last transaction took.");
        out.sample("shimkeeper_last_transaction_duration_seconds", {}, c.last->duration_seconds);
    }
    out.family("shimkeeper_store_bytes", "gauge", "Bytes of every artifact in the store.");
    out.sample("shimkeeper_store_bytes", m.store_bytes);
    if (m.cluster_connected) {
        out.family("shimkeeper_cluster_connected", "gauge",
                   "1 when the last read of the Kubernetes API server succeeded.");
        out.sample("shimkeeper_cluster_connected", std::uint64_t{*m.cluster_connected ? 1U : 0U});
    }
    return out.text();
}

util::Expected<Written> write_textfile(const std::filesystem::path& dir, const std::string& text) {
    const std::filesystem::path target = dir / k_textfile_name;
    std::error_code ec;
    if (std::filesystem::exists(target, ec)) {
        if (auto current = util::read_file(target); current && *current == text) {
            return Written::unchanged;
        }
    }
    TRY(util::write_file_atomic(target, text, 0644));
    return Written::yes;
}

util::Expected<void> remove_textfile(const std::filesystem::path& dir) {
    return util::remove_all(dir / k_textfile_name);
}

} // namespace shimkeeper::metrics
