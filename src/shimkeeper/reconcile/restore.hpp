// Puts back the before-state a journal entry recorded: config files (content, or absence) and
// bin/ links, each atomically. Idempotent, so a crash during a restore is recovered by
// restoring again.
#pragma once

#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/reconcile/node.hpp"

#include <set>
#include <string>

namespace shimkeeper::reconcile {

// `written`: the node paths this process wrote (an in-process rollback knows them; nullptr for
// crash recovery). A file not written is left alone. A file that holds neither its backup nor
// what the transaction wrote (after_sha256) was changed by someone else since: it is not
// overwritten, and the restore reports it (ErrorCode::changed) after restoring everything else.
util::Expected<void> restore_before_state(const Node& node, const JournalEntry& entry,
                                          const std::set<std::string>* written = nullptr);

} // namespace shimkeeper::reconcile
