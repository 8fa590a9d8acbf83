// The node transaction: one apply (or rollback) taken from the desired shims to a committed
// generation, or back to exactly where the node was.
//
//   recover any interrupted entry -> stage (fetch, preflight, store) -> plan (node_plan.hpp)
//   -> journal(intent, before) -> links -> config -> restart -> health -> commit
//
// Everything that can be refused is refused before the first change to the node (staging,
// planning and containerd's own validation of the candidate config); from the first change on,
// every failure rolls back files and links atomically, restarts containerd once more if it had
// been restarted, and checks the old handlers are healthy again. If even the rollback cannot be
// recorded, the journal entry stays in progress and the next transaction recovers it first.
#pragma once

#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/reconcile/node_plan.hpp"
#include "shimkeeper/spec/shim_spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::reconcile {

struct Outcome {
    TxnResult result = TxnResult::committed;
    bool changed = false; // false: the node already matched, nothing was written
    int generation = 0;   // the generation in use afterwards (0: none)
    std::string reason;   // for failed / rolled back
    int restarts = 0;     // containerd restarts made
    NodePlan plan;        // what was (or was to be) done, per shim, link and config file
    std::optional<JournalEntry> recovered; // an interrupted transaction closed first
    bool changed_underneath = false;       // rolled back because a file was edited by someone else
    // The shims a failure is about (containerd would not run or serve what they changed); empty
    // for a failure of the node itself (a file it could not write). A refusal says it through
    // Node::refused_about.
    std::vector<std::string> blamed;

    // 0 committed or nothing to do, 1 failed or rolled back.
    int exit_code() const { return result == TxnResult::committed ? 0 : 1; }
};

// Takes the node to `target` (all shims of the new generation). kind: "apply" or "rollback".
// `existing_generation`: make that stored generation current instead of recording a new one
// (rollback). Returns an Error only for what was refused before any change (exit 2 for bad
// input, 1 otherwise); a failure after the first change is an Outcome that was rolled back.
util::Expected<Outcome> execute(const Node& node, const std::vector<spec::ShimSpec>& target,
                                const std::string& kind, Restart restart,
                                std::optional<int> existing_generation = std::nullopt);

} // namespace shimkeeper::reconcile
