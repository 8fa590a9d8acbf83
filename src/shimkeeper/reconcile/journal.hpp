// The write-ahead journal of one transaction, in <store>/state/journal.json.
// It is written (atomically) before the first change to the node and after every step, so that
// a process killed at any point leaves enough behind for the next start to restore the old state:
// the before-state of every file and link it may touch, and the steps already taken.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::reconcile {

// A containerd config file the transaction may write.
struct JournalFile {
    std::string node_path;
    bool existed_before = false;
    std::string backup; // folder of containerd::keep_previous copies for this transaction
    // sha256 of the content the transaction writes ("" when the file is removed, or in entries
    // written before this field existed): a file holding anything but that or its backup was
    // changed by someone else, and a restore leaves it alone.
    std::string after_sha256;
};

// A bin/ link the transaction may flip.
struct JournalLink {
    std::string binary;
    std::optional<std::string> before; // link target before, nullopt = no link
    std::optional<std::string> after;
};

enum class TxnResult { in_progress, committed, failed, rolled_back, rollback_failed };

const char* to_string(TxnResult result);

struct JournalEntry {
    std::string id;       // "20261122T034400Z-1a2b3c"
    std::string kind;     // "apply" | "rollback"
    std::string started;  // RFC 3339
    std::string finished; // empty while in progress
    std::optional<int> from_generation;
    int to_generation = 0;
    std::vector<std::string> shims; // names in the target generation
    std::vector<JournalFile> files;
    std::vector<JournalLink> links;
    std::vector<std::string> steps; // completed (restart: begun) steps, in order
    TxnResult result = TxnResult::in_progress;
    std::string reason; // why it failed or was rolled back
    int restarts = 0;   // containerd restarts this transaction made

    bool has_step(const std::string& step) const;
};

class Journal {
public:
    explicit Journal(std::filesystem::path state_dir) : m_state_dir(std::move(state_dir)) {}

    // The last transaction, finished or not; nullopt when there never was one.
    util::Expected<std::optional<JournalEntry>> load() const;
    util::Expected<void> save(const JournalEntry& entry) const;
    // Where before-copies of config files of one transaction go.
    std::filesystem::path backup_dir(const std::string& txn_id) const;
    // Keeps the before-copies of the newest `keep` transactions (ids sort by time), removes the
    // rest: they are needed only while a transaction runs, and kept a while for the operator.
    util::Expected<void> prune_backups(std::size_t keep) const;

private:
    std::filesystem::path file() const { return m_state_dir / "journal.json"; }

    std::filesystem::path m_state_dir;
};

std::string new_transaction_id();

} // namespace shimkeeper::reconcile
