#include "shimkeeper/reconcile/recovery.hpp"

#include "shimkeeper/reconcile/expectation.hpp"
#include "shimkeeper/reconcile/restore.hpp"
#include "shimkeeper/util/utc_time.hpp"

namespace shimkeeper::reconcile {

namespace {

// Takes containerd back to what is on disk now, restarting only if it runs something else.
util::Expected<void> realign_containerd(const Node& node, const JournalEntry& entry,
                                        const health::HealthExpectation& expectation) {
    if (!entry.has_step("restart")) {
        // The new config was written but never loaded: if containerd answers with the old
        // handlers it already runs what is on disk.
        auto version = node.containerd->version(std::chrono::seconds(2));
        auto status = node.containerd->cri_status(std::chrono::seconds(2));
        if (health::evaluate(expectation, version, status).healthy) {
            return {};
        }
    }
    auto restarted = TRY(node.restarts->restart(node.detection.unit));
    if (restarted.result != systemd::JobResult::done) {
        return util::fail(util::ErrorCode::external,
                          "during recovery: " + restarted.describe(node.detection.unit));
    }
    auto report = health::wait_healthy(*node.containerd, expectation, node.settings.health.timeout);
    if (!report.healthy) {
        return util::fail(util::ErrorCode::external,
                          "containerd unhealthy after recovery: " + report.reason);
    }
    return {};
}

} // namespace

bool recovery_pending(const store::Store& store) {
    auto entry = Journal(store.state_dir()).load();
    return !entry || (*entry && (**entry).result == TxnResult::in_progress);
}

util::Expected<Recovery> recover(const Node& node, Restart restart) {
    Journal journal(node.store.state_dir());
    auto loaded = TRY(journal.load());
    if (!loaded || loaded->result != TxnResult::in_progress) {
        return Recovery{};
    }
    Recovery recovery{true, std::move(*loaded)};
    JournalEntry& entry = recovery.entry;
    const std::string last = entry.steps.empty() ? "intent" : entry.steps.back();
    auto state = TRY(node.store.load_state());

    // The commit step saves the new generation and then closes the journal; a crash between the
    // two leaves a complete new state behind: keep it.
    if (entry.has_step("commit") && state.current == entry.to_generation) {
        entry.result = TxnResult::committed;
        entry.finished = util::now_rfc3339();
        entry.reason =
            "interrupted after its commit; kept generation " + std::to_string(entry.to_generation);
        TRY(journal.save(entry));
        return recovery;
    }

    node.log.warning("transaction " + entry.id + " was interrupted after step '" + last +
                         "'; restoring the state before it",
                     {.txn = entry.id});
    TRY(restore_before_state(node, entry));
    if (restart == Restart::yes && entry.has_step("config")) {
        const store::Generation* current = state.current_generation();
        auto expectation = expectation_for(
            node.store, current ? current->shims : std::vector<store::InstalledShim>{},
            std::nullopt, {});
        if (auto aligned = realign_containerd(node, entry, expectation); !aligned) {
            entry.result = TxnResult::rollback_failed;
            entry.reason = "interrupted after step '" + last + "'; " + aligned.error().message();
            entry.finished = util::now_rfc3339();
            TRY(journal.save(entry));
            return std::unexpected(aligned.error());
        }
    }
    entry.result = TxnResult::rolled_back;
    entry.reason = "interrupted after step '" + last + "'; restored the state before it";
    entry.finished = util::now_rfc3339();
    TRY(journal.save(entry));
    return recovery;
}

} // namespace shimkeeper::reconcile
