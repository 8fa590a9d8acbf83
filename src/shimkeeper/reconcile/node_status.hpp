// The typed result of one reconcile, rendered after the commit by whoever reports it:
// `apply`'s output, the daemon's status.json and STATUS= line, and in cluster mode the Node's
// annotation and the Shim's status. One struct, so every renderer says the same thing.
#pragma once

#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/store/state.hpp"

#include <string>
#include <vector>

namespace shimkeeper::reconcile {

// What happened to one shim: the plan's action and how the transaction ended for it.
struct ShimOutcome {
    std::string name;
    std::string handler;
    ActionKind action = ActionKind::unchanged;
    std::string version;    // the version in use afterwards (the old one when rolled back)
    std::string digest;     // likewise
    bool installed = false; // part of the generation in use afterwards
};

struct NodeStatus {
    TxnResult result = TxnResult::committed;
    bool changed = false;
    std::string reason;
    int restarts = 0;
    int generation = 0;                          // in use afterwards, 0: none
    std::vector<store::InstalledShim> installed; // that generation's shims
    std::vector<ShimOutcome> shims;              // desired shims, then removals
    std::vector<std::string> config_files;       // node paths written (or restored)
};

// `state`: the store state after the transaction (its current generation is what runs).
NodeStatus node_status(const Outcome& outcome, const store::StoreState& state);

} // namespace shimkeeper::reconcile
