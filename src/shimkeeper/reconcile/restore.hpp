// Puts back the before-state a journal entry recorded: config files (content, or absence) and
// bin/ links, each atomically. Idempotent, so a crash during a restore is recovered by
// restoring again.
#pragma once

#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/reconcile/node.hpp"

namespace shimkeeper::reconcile {

util::Expected<void> restore_before_state(const Node& node, const JournalEntry& entry);

} // namespace shimkeeper::reconcile
