#include "shimkeeper/metrics/textfile.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <array>
#include <cstdio>

namespace shimkeeper::metrics {

namespace {

// Every result a transaction can end with, always present (a rate() over a series that appears
// only at its first increment misses that increment).
constexpr std::array<const char*, 4> k_results = {"committed", "failed", "rolled-back",
                                                  "rollback-failed"};

// Prometheus floats: enough digits to round-trip, no locale.
std::string number(double value) {
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%.17g", value);
    return text.data();
}

void family(std::string& out, const std::string& name, const char* type, const char* help) {
    out += "# HELP " + name + " " + help + "\n";
    out += "# TYPE " + name + " " + type + "\n";
}

} // namespace

std::string render_textfile(const NodeMetrics& m) {
    std::string out;
    const Counters& c = m.counters;
    family(out, "shimkeeper_shims_installed", "gauge", "Shims in the current generation.");
    out += "shimkeeper_shims_installed " + std::to_string(m.shims_installed) + "\n";

    family(out, "shimkeeper_transactions_total", "counter",
           "Transactions that changed or tried to change the node, by result.");
    for (const char* result : k_results) {
        auto found = c.transactions.find(result);
        const std::uint64_t value = found == c.transactions.end() ? 0 : found->second;
        out += std::string("shimkeeper_transactions_total{result=\"") + result + "\"} " +
               std::to_string(value) + "\n";
    }
    family(out, "shimkeeper_rollbacks_total", "counter",
           "Transactions whose changes were rolled back.");
    out += "shimkeeper_rollbacks_total " + std::to_string(c.rollbacks) + "\n";
    family(out, "shimkeeper_containerd_restarts_total", "counter",
           "containerd restarts made by shimkeeper (rollbacks included).");
    out += "shimkeeper_containerd_restarts_total " + std::to_string(c.containerd_restarts) + "\n";

    if (c.last) {
        family(out, "shimkeeper_last_transaction_timestamp_seconds", "gauge",
               "When the last transaction finished, seconds since the epoch.");
        out +=
            "shimkeeper_last_transaction_timestamp_seconds " + number(c.last->finished_unix) + "\n";
        family(out, "shimkeeper_last_transaction_duration_seconds", "gauge",
               "How long the last transaction took.");
        out += "shimkeeper_last_transaction_duration_seconds " + number(c.last->duration_seconds) +
               "\n";
    }
    family(out, "shimkeeper_store_bytes", "gauge", "Bytes of every artifact in the store.");
    out += "shimkeeper_store_bytes " + std::to_string(m.store_bytes) + "\n";
    if (m.cluster_connected) {
        family(out, "shimkeeper_cluster_connected", "gauge",
               "1 when the last read of the Kubernetes API server succeeded.");
        out += *m.cluster_connected ? "shimkeeper_cluster_connected 1\n"
                                    : "shimkeeper_cluster_connected 0\n";
    }
    return out;
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
