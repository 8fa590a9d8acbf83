// Metrics after a transaction, for `apply` and each reconcile of `run`: counts it in the store's
// counters (under the node lock the caller holds) and rewrites node_exporter's textfile. A
// failure here is a warning, never the command's failure: the node is what the transaction
// made it either way.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/reconcile/transaction.hpp"

#include <chrono>

namespace shimkeeper::cli {

// Started right before the transaction (its duration is the metric's).
class TransactionClock {
public:
    TransactionClock() : m_start(std::chrono::steady_clock::now()) {}
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    }

private:
    std::chrono::steady_clock::time_point m_start;
};

// `outcome`: what execute returned. A converged node (nothing changed) is no transaction: it
// counts nothing, and the textfile is rewritten only if something else in it changed.
void report_metrics(const Context& ctx, const util::Expected<reconcile::Outcome>& outcome,
                    const TransactionClock& clock);

} // namespace shimkeeper::cli
