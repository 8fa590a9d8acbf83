// What the metrics count across processes. `apply` and the daemon are separate processes, so the
// counters live in the store's state folder (`state/metrics.json`) and are only read and written
// while the node lock is held: two runs never lose each other's increments.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace shimkeeper::metrics {

struct LastTransaction {
    double finished_unix = 0;    // seconds since the epoch
    double duration_seconds = 0; // from its start (recovery of an older entry included)
    std::string result;          // committed | failed | rolled-back | rollback-failed
};

struct Counters {
    std::map<std::string, std::uint64_t> transactions; // by result
    std::uint64_t rollbacks = 0;                       // transactions that had to undo changes
    std::uint64_t containerd_restarts = 0;             // restarts made by shimkeeper
    std::optional<LastTransaction> last;
};

// One finished transaction as the counters see it.
struct TransactionRecord {
    std::string result;
    bool rolled_back = false; // changes were undone (rolled-back or rollback-failed)
    int restarts = 0;
    double finished_unix = 0;
    double duration_seconds = 0;
};

void count(Counters& counters, const TransactionRecord& record);

// A missing file is all zeroes; a damaged one is an Error naming the file and what to do.
util::Expected<Counters> load_counters(const std::filesystem::path& file);
util::Expected<void> save_counters(const std::filesystem::path& file, const Counters& counters);

} // namespace shimkeeper::metrics
