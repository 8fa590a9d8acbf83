// Crash recovery: every start of `apply` and `run` first looks at the journal. An entry still
// in progress means a process died mid-transaction; the node is taken back to the before-state
// recorded there (old, never a mix), restarting containerd only if what it runs differs.
#pragma once

#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/reconcile/node.hpp"

#include <optional>

namespace shimkeeper::reconcile {

struct Recovery {
    bool needed = false;
    JournalEntry entry; // the interrupted transaction, finished now
};

util::Expected<Recovery> recover(const Node& node, Restart restart);

// True when the journal holds an entry still in progress (read only; no lock needed to ask).
bool recovery_pending(const store::Store& store);

} // namespace shimkeeper::reconcile
