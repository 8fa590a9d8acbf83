#include "shimkeeper/reconcile/transaction.hpp"

#include "shimkeeper/containerd/node_file.hpp"
#include "shimkeeper/containerd/runtime_entry.hpp"
#include "shimkeeper/containerd/write.hpp"
#include "shimkeeper/reconcile/derive_runtime.hpp"
#include "shimkeeper/reconcile/expectation.hpp"
#include "shimkeeper/reconcile/fault.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/restore.hpp"
#include "shimkeeper/reconcile/stage.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <set>
#include <thread>

namespace shimkeeper::reconcile {

namespace {

// Config before-copies of this many recent transactions stay in <state>/backups/.
constexpr std::size_t k_kept_backups = 5;

util::Expected<void> apply_links(const Node& node, const std::vector<JournalLink>& links) {
    for (const auto& link : links) {
        if (link.after) {
            TRY(node.store.link_to(link.binary, *link.after));
        } else {
            TRY(node.store.unlink_binary(link.binary));
        }
    }
    return {};
}

// containerd < 1.7 (and an unknown version) gets the shim's absolute path as runtime_type; CRI
// then no longer sees a runc-typed runtime and ignores runc's options (BinaryName,
// SystemdCgroup). Installing still works, so this is a warning, not a refusal.
void warn_ignored_runc_options(const Node& node, const std::vector<spec::ShimSpec>& target) {
    if (containerd::choose_pointing(node.detection.binary_version) !=
        containerd::Pointing::absolute_type) {
        return;
    }
    for (const auto& spec : target) {
        if (spec.runtime_type == containerd::k_runc_v2_type && !spec.options.empty()) {
            node.log.warning(spec.location.to_string() + ": shim '" + spec.name +
                                 "': this containerd (< 1.7) ignores runc options of a runtime "
                                 "given by absolute path; its options will not take effect",
                             {.shim = spec.name, .handler = spec.handler});
        }
    }
}

// Runs one transaction step by step; any failure after the first change rolls back.
class Transaction {
public:
    Transaction(const Node& node, Restart restart, std::optional<int> existing_generation)
        : m_node(node), m_restart(restart), m_existing_generation(existing_generation),
          m_journal(node.store.state_dir()), m_log(node.log) {}

    util::Expected<Outcome> run(const std::vector<spec::ShimSpec>& target, const std::string& kind);

private:
    util::Expected<void> step(const std::string& name) {
        fault_point(name.c_str());
        m_entry.steps.push_back(name);
        return m_journal.save(m_entry);
    }
    util::Expected<Outcome> refuse(util::Error error, const std::vector<std::string>& about = {});
    util::Expected<Outcome> change_node(store::StoreState state);
    util::Expected<Outcome> roll_back(std::string reason, std::vector<std::string> blamed = {});
    std::vector<std::string> changed_shims() const;
    util::Expected<Outcome> commit(store::StoreState state);
    util::Expected<bool> restart_and_check(const health::HealthExpectation& expectation,
                                           std::string& reason);
    void log_shim_changes(TxnResult result) const;

    const Node& m_node;
    Restart m_restart;
    std::optional<int> m_existing_generation;
    Journal m_journal;
    JournalEntry m_entry;
    Outcome m_outcome;
    std::optional<health::CriStatus> m_before_status;
    health::HealthExpectation m_old_expectation;
    std::set<std::string> m_written; // config files this transaction wrote (node paths)
    util::Log m_log;                 // node.log with this transaction's TXN= field
};

// One record per shim that changed, carrying its fields, so that `journalctl SHIM=<name>`
// shows each shim's own history (the summary line of apply or the daemon names no shim).
void Transaction::log_shim_changes(TxnResult result) const {
    for (const auto& action : m_outcome.plan.shims.actions) {
        if (action.kind == ActionKind::unchanged) {
            continue;
        }
        const std::string& digest =
            action.kind == ActionKind::remove ? action.from_digest : action.to_digest;
        const util::LogFields fields{.shim = action.name,
                                     .handler = action.handler,
                                     .digest = digest.empty() ? "" : "sha256:" + digest};
        const std::string what = action.name + ": " + to_string(action.kind) + " of handler " +
                                 action.handler +
                                 (digest.empty() ? "" : " (sha256:" + digest + ")");
        if (result == TxnResult::committed) {
            m_log.info(what + " committed", fields);
        } else {
            m_log.warning(what + " " + to_string(result), fields);
        }
    }
}

// Refused before the first change: the node is untouched; the journal records why.
util::Expected<Outcome> Transaction::refuse(util::Error error,
                                            const std::vector<std::string>& about) {
    if (!about.empty() && m_node.refused_about) {
        m_node.refused_about(about);
    }
    m_entry.result = TxnResult::failed;
    m_entry.reason = error.message();
    m_entry.finished = util::now_rfc3339();
    if (auto saved = m_journal.save(m_entry); !saved) {
        m_log.warning("cannot record the failed transaction: " + saved.error().message());
    }
    return std::unexpected(std::move(error));
}

util::Expected<bool> Transaction::restart_and_check(const health::HealthExpectation& expectation,
                                                    std::string& reason) {
    m_log.debug("restarting " + m_node.detection.unit + " to load the changed config");
    auto restarted = m_node.restarts->restart(m_node.detection.unit);
    ++m_entry.restarts;
    ++m_outcome.restarts;
    if (!restarted) {
        reason = restarted.error().message();
        return false;
    }
    if (restarted->result != systemd::JobResult::done ||
        restarted->state.active_state != "active") {
        reason = restarted->describe(m_node.detection.unit);
        return false;
    }
    health::Pacer pacer = health::real_pacer();
    if (m_node.heartbeat) {
        pacer.sleep = [heartbeat = m_node.heartbeat](std::chrono::milliseconds wait) {
            heartbeat();
            std::this_thread::sleep_for(wait);
        };
    }
    auto report = health::wait_healthy(*m_node.containerd, expectation,
                                       m_node.settings.health.timeout, pacer);
    if (!report.healthy) {
        reason = "containerd unhealthy after restart: " + report.reason;
        return false;
    }
    return true;
}

// The entry stays `in-progress` on disk if it cannot be saved as finished: the next
// transaction (or the daemon's next attempt) then recovers it before anything else.
std::vector<std::string> Transaction::changed_shims() const {
    std::vector<std::string> out;
    for (const auto& action : m_outcome.plan.shims.actions) {
        if (action.kind != ActionKind::unchanged) {
            out.push_back(action.name);
        }
    }
    return out;
}

util::Expected<Outcome> Transaction::roll_back(std::string reason,
                                               std::vector<std::string> blamed) {
    m_log.error(reason + "; rolling back");
    m_entry.reason = reason;
    m_outcome.blamed = std::move(blamed);
    auto restored = restore_before_state(m_node, m_entry, &m_written);
    std::string rollback_problem;
    if (!restored) {
        rollback_problem = restored.error().message();
    } else if (m_entry.has_step("restart")) {
        std::string why;
        auto ok = restart_and_check(m_old_expectation, why);
        if (!ok || !*ok) {
            rollback_problem = ok ? why : ok.error().message();
        }
    }
    m_entry.finished = util::now_rfc3339();
    m_entry.result = rollback_problem.empty() ? TxnResult::rolled_back : TxnResult::rollback_failed;
    if (!rollback_problem.empty()) {
        m_entry.reason += "; rollback failed too: " + rollback_problem;
    }
    if (auto saved = m_journal.save(m_entry); !saved) {
        m_entry.reason += "; the journal could not record the rollback (" +
                          saved.error().message() + "): the next run recovers it";
    }
    m_outcome.result = m_entry.result;
    m_outcome.reason = m_entry.reason;
    m_outcome.changed = true;
    log_shim_changes(m_outcome.result);
    return m_outcome;
}

util::Expected<Outcome> Transaction::commit(store::StoreState state) {
    if (auto saved = step("commit"); !saved) {
        return roll_back("recording the commit step: " + saved.error().message());
    }
    if (m_existing_generation) {
        state.current = *m_existing_generation;
    } else if (m_outcome.plan.shims.new_generation) {
        store::Generation generation{state.next_number(), util::now_rfc3339(),
                                     m_outcome.plan.shims.target};
        state.current = generation.number;
        state.generations.push_back(std::move(generation));
    }
    if (auto saved = m_node.store.save_state(state); !saved) {
        return roll_back("saving the new generation: " + saved.error().message());
    }
    // From here the new generation is on disk: recovery keeps it even if the journal below
    // cannot be closed (an entry with the commit step and a matching state is committed).
    m_entry.result = TxnResult::committed;
    m_entry.finished = util::now_rfc3339();
    m_entry.to_generation = state.current.value_or(0);
    if (auto saved = m_journal.save(m_entry); !saved) {
        m_log.warning("closing the journal: " + saved.error().message() +
                      " (the next run closes it as committed)");
    }
    if (auto removed = m_node.store.collect_garbage(m_node.settings.store.keep_generations, "/proc",
                                                    m_node.keep_artifacts);
        !removed) {
        m_log.warning("garbage collection: " + removed.error().message());
    }
    if (auto pruned = m_journal.prune_backups(k_kept_backups); !pruned) {
        m_log.warning("pruning config backups: " + pruned.error().message());
    }
    m_outcome.result = TxnResult::committed;
    m_outcome.generation = state.current.value_or(0);
    log_shim_changes(m_outcome.result);
    return m_outcome;
}

util::Expected<Outcome> Transaction::run(const std::vector<spec::ShimSpec>& desired,
                                         const std::string& kind) {
    // Never start over an interrupted entry: its before-state is the only record of how to undo.
    auto recovery = TRY(recover(m_node, m_restart));
    if (recovery.needed) {
        m_outcome.recovered = recovery.entry;
    }
    auto state = TRY(m_node.store.load_state());
    const store::Generation* current = state.current_generation();
    m_outcome.generation = current ? current->number : 0;

    m_entry.id = new_transaction_id();
    m_log = m_node.log.with({.txn = m_entry.id});
    m_entry.kind = kind;
    m_entry.started = util::now_rfc3339();
    m_entry.from_generation = state.current;
    m_entry.to_generation = m_existing_generation.value_or(state.next_number());
    for (const auto& spec : desired) {
        m_entry.shims.push_back(spec.name);
    }
    const StageOptions stage_options = stage_options_of(m_node);
    // A Shim that names no runtime type learns it from its artifact before anything is planned;
    // fetching one that is not held yet changes nothing but the content-addressed store.
    const ArtifactFetch fetch{m_node.downloader, stage_options, m_log};
    auto derived = derive_runtime_types(desired, current, m_node.store, &fetch);
    if (!derived) {
        return refuse(std::move(derived.error()));
    }
    const std::vector<spec::ShimSpec>& target = *derived;
    warn_ignored_runc_options(m_node, target);
    const PlanView view{m_node.root, m_node.store, m_node.detection};

    // What the store already holds intact: when that makes the plan converged, the node is done
    // here, without a download, a journal write or a restart.
    auto known = known_artifacts(target, current, m_node.store);
    if (!known) {
        return refuse(std::move(known.error()));
    }
    auto early = plan_node(view, target, *known, state, m_existing_generation);
    if (!early) {
        return refuse(std::move(early.error()));
    }
    if (early->converged()) {
        m_outcome.plan = std::move(*early);
        return m_outcome;
    }

    // Something changes: the intent is on disk before staging, so a crash anywhere from here
    // leaves an entry for recovery to close.
    if (auto saved = m_journal.save(m_entry); !saved) {
        return refuse(std::move(saved.error()));
    }
    // Stage every artifact: nothing on the node changes yet, so a failure here needs no rollback.
    std::vector<std::optional<KnownArtifact>> artifacts;
    for (const auto& spec : target) {
        auto staged = stage_shim(spec, known_digest(spec, current, m_node.store), m_node.store,
                                 m_node.downloader, stage_options,
                                 m_log.with({.shim = spec.name, .handler = spec.handler}));
        if (!staged) {
            return refuse(std::move(staged.error()), {spec.name});
        }
        artifacts.push_back(KnownArtifact{staged->digest, staged->binary_path});
    }
    m_entry.steps.insert(m_entry.steps.end(), {"fetch", "preflight", "store"});

    // The same plan `plan` prints, now with every digest known; then containerd itself judges
    // the candidate config, still changing nothing.
    auto plan = plan_node(view, target, artifacts, state, m_existing_generation);
    if (!plan) {
        return refuse(std::move(plan.error()));
    }
    m_outcome.plan = std::move(*plan);
    for (const auto& change : m_outcome.plan.config_changes) {
        if (auto valid = containerd::prevalidate(m_node.detection, change, m_node.root); !valid) {
            return refuse(std::move(valid.error()), changed_shims());
        }
    }
    if (m_outcome.plan.converged()) {
        // Only a download could tell (an unverified URL served what the node already runs).
        m_entry.result = TxnResult::committed;
        m_entry.reason = "nothing to change after staging";
        m_entry.finished = util::now_rfc3339();
        m_entry.to_generation = state.current.value_or(0);
        TRY(m_journal.save(m_entry));
        return m_outcome;
    }
    return change_node(std::move(state));
}

util::Expected<Outcome> Transaction::change_node(store::StoreState state) {
    const store::Generation* current = state.current_generation();
    const NodePlan& plan = m_outcome.plan;
    m_outcome.changed = true;

    std::set<std::string> dropped;
    if (current != nullptr) {
        for (const auto& shim : current->shims) {
            dropped.insert(shim.handler);
        }
    }
    for (const auto& shim : plan.shims.target) {
        dropped.erase(shim.handler);
    }
    const bool restart = m_restart == Restart::yes && plan.restart_needed;
    if (restart) {
        // A bus that does not answer now is refused with the node untouched; found only at the
        // restart, it would leave a rollback that cannot restart either (seen under heavy load).
        if (auto reached = m_node.restarts->expect_reachable(m_node.detection.unit); !reached) {
            return refuse(std::move(reached.error())
                              .with_context("systemd must restart " + m_node.detection.unit +
                                            " to load the change, and does not answer (nothing "
                                            "was changed; a later run tries again)"));
        }
        auto before = m_node.containerd->cri_status(std::chrono::seconds(5));
        if (before) {
            m_before_status = *before;
        }
        m_old_expectation = expectation_for(
            m_node.store, current ? current->shims : std::vector<store::InstalledShim>{},
            m_before_status, {});
    }

    // Told before the write-ahead, not after it: cluster mode's report here takes the rollout
    // slot (its `installing` write), and the next node's wait for a freed slot ends only with
    // that write, so the backups' and the journal's fsyncs stay off it. What must come last
    // before the first change, and needs no request, is recheck_before_change below.
    if (m_node.before_change) {
        if (auto told = m_node.before_change(plan, state); !told) {
            return refuse(std::move(told.error()));
        }
    }
    // Write-ahead: the before-state goes to disk before the first change. A failure up to the
    // second save is still a refusal: the node has not changed.
    const auto backups = m_journal.backup_dir(m_entry.id);
    if (auto made = util::create_directories(backups); !made) {
        return refuse(std::move(made.error()));
    }
    for (const auto& change : plan.config_changes) {
        if (auto kept = containerd::keep_previous(change, backups); !kept) {
            return refuse(std::move(kept.error()));
        }
        m_entry.files.push_back({change.node_path.string(), change.before.has_value(),
                                 backups.string(),
                                 change.after ? util::sha256_hex(*change.after) : ""});
    }
    m_entry.links = plan.links;
    if (auto saved = m_journal.save(m_entry); !saved) { // staging steps and the before-state
        return refuse(std::move(saved.error()));
    }
    fault_point("planned");
    if (m_node.recheck_before_change) {
        if (auto clear = m_node.recheck_before_change(); !clear) {
            return refuse(std::move(clear.error()));
        }
    }
    // Compare before the first change: a file edited since it was read for the plan stops the
    // transaction here (execute plans once more); the write itself compares again.
    for (const auto& change : plan.config_changes) {
        if (auto same = containerd::expect_unchanged(m_node.root, change.node_path, change.before);
            !same) {
            return refuse(std::move(same.error()));
        }
    }

    // The first change. From here on every failure rolls back.
    if (auto linked = apply_links(m_node, plan.links); !linked) {
        return roll_back("switching bin/ links: " + linked.error().message());
    }
    if (auto saved = step("links"); !saved) {
        return roll_back("recording the links step: " + saved.error().message());
    }
    for (const auto& change : plan.config_changes) {
        if (auto written = containerd::write_change(change, m_node.root); !written) {
            m_outcome.changed_underneath = written.error().code() == util::ErrorCode::changed;
            return roll_back("writing " + change.node_path.string() + ": " +
                             written.error().message());
        }
        m_written.insert(change.node_path.string());
    }
    if (auto saved = step("config"); !saved) {
        return roll_back("recording the config step: " + saved.error().message());
    }

    if (restart) {
        // Recorded as begun: a crash from here on restarts again on recovery.
        if (auto saved = step("restart"); !saved) {
            return roll_back("recording the restart step: " + saved.error().message());
        }
        auto expectation =
            expectation_for(m_node.store, plan.shims.target, m_before_status, dropped);
        std::string reason;
        auto healthy = restart_and_check(expectation, reason);
        // containerd would not start, or not serve the target, with what the shims changed.
        if (!healthy) {
            return roll_back(healthy.error().message(), changed_shims());
        }
        if (!*healthy) {
            return roll_back(reason, changed_shims());
        }
        if (auto saved = step("health"); !saved) {
            return roll_back("recording the health step: " + saved.error().message());
        }
    } else if (!plan.config_changes.empty()) {
        m_log.info("containerd was not restarted (--no-restart): restart it to load the "
                   "new config");
    }
    return commit(std::move(state));
}

} // namespace

util::Expected<Outcome> execute(const Node& node, const std::vector<spec::ShimSpec>& target,
                                const std::string& kind, Restart restart,
                                std::optional<int> existing_generation) {
    // Someone else's edit between the plan and the write: never overwritten. The transaction
    // stopped before its first change (or rolled back), and is planned once more from the file
    // as it is now; a second edit in the same window is an error naming the file.
    for (int round = 1;; ++round) {
        Transaction txn(node, restart, existing_generation);
        auto outcome = txn.run(target, kind);
        const bool changed = outcome ? outcome->changed_underneath
                                     : outcome.error().code() == util::ErrorCode::changed;
        if (!changed || round == 2) {
            return outcome;
        }
        node.log.warning(std::string(outcome ? outcome->reason : outcome.error().message()) +
                         "; planning again from the file as it is now");
    }
}

} // namespace shimkeeper::reconcile
