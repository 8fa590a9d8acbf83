#include "shimkeeper/reconcile/transaction.hpp"

#include "shimkeeper/containerd/runtime_entry.hpp"
#include "shimkeeper/containerd/write.hpp"
#include "shimkeeper/reconcile/expectation.hpp"
#include "shimkeeper/reconcile/fault.hpp"
#include "shimkeeper/reconcile/plan.hpp"
#include "shimkeeper/reconcile/restore.hpp"
#include "shimkeeper/reconcile/stage.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <set>

namespace shimkeeper::reconcile {

namespace {

// Config before-copies of this many recent transactions stay in <state>/backups/.
constexpr std::size_t k_kept_backups = 5;

std::string link_target_for(const Node& node, const store::InstalledShim& shim) {
    return node.root.to_node(node.store.artifact_dir(shim.digest) / shim.binary_path).string();
}

bool same_shims(const std::vector<store::InstalledShim>& a, const store::Generation* current) {
    if (current == nullptr) {
        return a.empty();
    }
    auto key = [](const store::InstalledShim& s) {
        return std::tie(s.name, s.handler, s.runtime_type, s.binary, s.binary_path, s.version,
                        s.digest, s.url, s.options_toml);
    };
    if (a.size() != current->shims.size()) {
        return false;
    }
    for (const auto& shim : a) {
        const auto* have = current->find(shim.name);
        if (have == nullptr || key(*have) != key(shim)) {
            return false;
        }
    }
    return true;
}

// Link changes: every target shim's link, and the links of shims that go away.
std::vector<JournalLink> plan_links(const Node& node,
                                    const std::vector<store::InstalledShim>& target,
                                    const store::Generation* current) {
    std::vector<JournalLink> links;
    std::set<std::string> wanted;
    for (const auto& shim : target) {
        wanted.insert(shim.binary);
        JournalLink link{shim.binary, node.store.binary_link_target(shim.binary),
                         link_target_for(node, shim)};
        if (link.before != link.after) {
            links.push_back(std::move(link));
        }
    }
    if (current != nullptr) {
        for (const auto& shim : current->shims) {
            auto before = node.store.binary_link_target(shim.binary);
            if (!wanted.contains(shim.binary) && before) {
                links.push_back({shim.binary, before, std::nullopt});
                wanted.insert(shim.binary);
            }
        }
    }
    return links;
}

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

// Runs one transaction step by step; any failure after the first change rolls back.
class Transaction {
public:
    Transaction(const Node& node, Restart restart, std::optional<int> existing_generation)
        : m_node(node), m_restart(restart), m_existing_generation(existing_generation),
          m_journal(node.store.state_dir()) {}

    util::Expected<Outcome> run(const std::vector<spec::ShimSpec>& target, const std::string& kind);

private:
    util::Expected<void> step(const std::string& name) {
        fault_point(name.c_str());
        m_entry.steps.push_back(name);
        return m_journal.save(m_entry);
    }
    util::Expected<Outcome> refuse(util::Error error);
    util::Expected<Outcome> change_node(store::StoreState state,
                                        std::vector<store::InstalledShim> shims,
                                        std::vector<containerd::FileChange> changes);
    util::Expected<Outcome> roll_back(std::string reason);
    util::Expected<Outcome> commit(store::StoreState state,
                                   std::vector<store::InstalledShim> shims);
    util::Expected<bool> restart_and_check(const health::HealthExpectation& expectation,
                                           std::string& reason);

    const Node& m_node;
    Restart m_restart;
    std::optional<int> m_existing_generation;
    Journal m_journal;
    JournalEntry m_entry;
    Outcome m_outcome;
    std::optional<health::CriStatus> m_before_status;
    health::HealthExpectation m_old_expectation;
};

// Refused before the first change: the node is untouched; the journal records why.
util::Expected<Outcome> Transaction::refuse(util::Error error) {
    m_entry.result = TxnResult::failed;
    m_entry.reason = error.message();
    m_entry.finished = now_rfc3339();
    if (auto saved = m_journal.save(m_entry); !saved) {
        m_node.log.warning("cannot record the failed transaction: " + saved.error().message());
    }
    return std::unexpected(std::move(error));
}

util::Expected<bool> Transaction::restart_and_check(const health::HealthExpectation& expectation,
                                                    std::string& reason) {
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
    auto report =
        health::wait_healthy(*m_node.containerd, expectation, m_node.settings.health.timeout);
    if (!report.healthy) {
        reason = "containerd unhealthy after restart: " + report.reason;
        return false;
    }
    return true;
}

util::Expected<Outcome> Transaction::roll_back(std::string reason) {
    m_node.log.error(reason + "; rolling back");
    m_entry.reason = reason;
    auto restored = restore_before_state(m_node, m_entry);
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
    m_entry.finished = now_rfc3339();
    m_entry.result = rollback_problem.empty() ? TxnResult::rolled_back : TxnResult::rollback_failed;
    if (!rollback_problem.empty()) {
        m_entry.reason += "; rollback failed too: " + rollback_problem;
    }
    TRY(m_journal.save(m_entry));
    m_outcome.result = m_entry.result;
    m_outcome.reason = m_entry.reason;
    m_outcome.changed = true;
    return m_outcome;
}

util::Expected<Outcome> Transaction::commit(store::StoreState state,
                                            std::vector<store::InstalledShim> shims) {
    TRY(step("commit"));
    const store::Generation* current = state.current_generation();
    if (m_existing_generation) {
        state.current = *m_existing_generation;
    } else if (!same_shims(shims, current)) {
        store::Generation generation{state.next_number(), now_rfc3339(), std::move(shims)};
        state.current = generation.number;
        state.generations.push_back(std::move(generation));
    }
    TRY(m_node.store.save_state(state));
    m_entry.result = TxnResult::committed;
    m_entry.finished = now_rfc3339();
    m_entry.to_generation = state.current.value_or(0);
    TRY(m_journal.save(m_entry));
    if (auto removed = m_node.store.collect_garbage(m_node.settings.store.keep_generations);
        !removed) {
        m_node.log.warning("garbage collection: " + removed.error().message());
    }
    if (auto pruned = m_journal.prune_backups(k_kept_backups); !pruned) {
        m_node.log.warning("pruning config backups: " + pruned.error().message());
    }
    m_outcome.result = TxnResult::committed;
    m_outcome.generation = state.current.value_or(0);
    return m_outcome;
}

util::Expected<Outcome> Transaction::run(const std::vector<spec::ShimSpec>& target,
                                         const std::string& kind) {
    auto state = TRY(m_node.store.load_state());
    const store::Generation* current = state.current_generation();
    m_outcome.generation = current ? current->number : 0;

    std::set<std::string> binaries;
    for (const auto& spec : target) {
        if (!binaries.insert(spec.binary).second) {
            return util::fail(util::ErrorCode::invalid_input,
                              spec.location.to_string() + ": binary '" + spec.binary +
                                  "' is used by two shims; each shim needs its own binary name");
        }
    }

    m_entry.id = new_transaction_id();
    m_entry.kind = kind;
    m_entry.started = now_rfc3339();
    m_entry.from_generation = state.current;
    m_entry.to_generation = m_existing_generation.value_or(state.next_number());
    for (const auto& spec : target) {
        m_entry.shims.push_back(spec.name);
    }

    // Stage every artifact: nothing on the node changes yet, so a failure here needs no rollback.
    StageOptions stage_options;
    stage_options.fetch = m_node.settings.fetch;
    std::vector<store::InstalledShim> shims;
    for (const auto& spec : target) {
        auto staged = stage_shim(spec, m_node.store, m_node.downloader, stage_options, m_node.log);
        if (!staged) {
            return refuse(std::move(staged.error()));
        }
        shims.push_back({spec.name, spec.handler, spec.runtime_type, spec.binary,
                         staged->binary_path, spec.version, staged->digest, spec.fetch.url,
                         options_fingerprint(spec.options)});
    }

    // Plan the config edit and let containerd itself judge the candidate, still changing nothing.
    // containerd < 1.7 (and an unknown version) gets the shim's absolute path as runtime_type;
    // CRI then no longer sees a runc-typed runtime and ignores runc's options (BinaryName,
    // SystemdCgroup). Installing still works, so this is a warning, not a refusal.
    const bool absolute_type = containerd::choose_pointing(m_node.detection.binary_version) ==
                               containerd::Pointing::absolute_type;
    for (const auto& spec : target) {
        if (absolute_type && spec.runtime_type == containerd::k_runc_v2_type &&
            !spec.options.empty()) {
            m_node.log.warning(spec.location.to_string() + ": shim '" + spec.name +
                               "': this containerd (< 1.7) ignores runc options of a runtime "
                               "given by absolute path; its options will not take effect");
        }
    }
    std::vector<containerd::DesiredRuntime> runtimes;
    for (std::size_t i = 0; i < target.size(); ++i) {
        runtimes.push_back(
            containerd::desired_runtime(target[i], m_node.settings.store.dir, shims[i].digest));
    }
    auto changes = containerd::plan_edits(m_node.detection, runtimes, m_node.root);
    if (!changes) {
        return refuse(std::move(changes.error()));
    }
    for (const auto& change : *changes) {
        if (auto valid = containerd::prevalidate(m_node.detection, change, m_node.root); !valid) {
            return refuse(std::move(valid.error()));
        }
    }
    return change_node(std::move(state), std::move(shims), std::move(*changes));
}

util::Expected<Outcome> Transaction::change_node(store::StoreState state,
                                                 std::vector<store::InstalledShim> shims,
                                                 std::vector<containerd::FileChange> changes) {
    const store::Generation* current = state.current_generation();
    auto links = plan_links(m_node, shims, current);
    m_outcome.config_changes = changes;
    const bool same_generation =
        m_existing_generation ? state.current == m_existing_generation : same_shims(shims, current);
    if (changes.empty() && links.empty() && same_generation) {
        return m_outcome; // converged: no journal, no write, no restart
    }
    m_outcome.changed = true;

    std::set<std::string> dropped;
    if (current != nullptr) {
        for (const auto& shim : current->shims) {
            dropped.insert(shim.handler);
        }
    }
    for (const auto& shim : shims) {
        dropped.erase(shim.handler);
    }
    const bool restart =
        m_restart == Restart::yes && containerd::needs_restart(m_node.detection, changes);
    if (restart) {
        auto before = m_node.containerd->cri_status(std::chrono::seconds(5));
        if (before) {
            m_before_status = *before;
        }
        m_old_expectation = expectation_for(
            m_node.store, current ? current->shims : std::vector<store::InstalledShim>{},
            m_before_status, {});
    }

    // Write-ahead: the before-state goes to disk before the first change.
    const auto backups = m_journal.backup_dir(m_entry.id);
    TRY(util::create_directories(backups));
    for (const auto& change : changes) {
        TRY(containerd::keep_previous(change, backups));
        m_entry.files.push_back(
            {change.node_path.string(), change.before.has_value(), backups.string()});
    }
    m_entry.links = links;
    TRY(m_journal.save(m_entry)); // intent and before-state, ahead of any change
    // Staging already happened (it changes nothing on the node); its steps share one save.
    for (const char* done : {"fetch", "preflight", "store"}) {
        fault_point(done);
        m_entry.steps.emplace_back(done);
    }
    TRY(m_journal.save(m_entry));

    if (auto linked = apply_links(m_node, links); !linked) {
        return roll_back("switching bin/ links: " + linked.error().message());
    }
    TRY(step("links"));
    for (const auto& change : changes) {
        if (auto written = containerd::write_change(change, m_node.root); !written) {
            return roll_back("writing " + change.node_path.string() + ": " +
                             written.error().message());
        }
    }
    TRY(step("config"));

    if (restart) {
        TRY(step("restart")); // recorded as begun: a crash from here on restarts again on recovery
        auto expectation = expectation_for(m_node.store, shims, m_before_status, dropped);
        std::string reason;
        auto healthy = restart_and_check(expectation, reason);
        if (!healthy) {
            return roll_back(healthy.error().message());
        }
        if (!*healthy) {
            return roll_back(reason);
        }
        TRY(step("health"));
    } else if (!changes.empty()) {
        m_node.log.info("containerd was not restarted (--no-restart): restart it to load the "
                        "new config");
    }
    return commit(std::move(state), std::move(shims));
}

} // namespace

util::Expected<Outcome> execute(const Node& node, const std::vector<spec::ShimSpec>& target,
                                const std::string& kind, Restart restart,
                                std::optional<int> existing_generation) {
    Transaction txn(node, restart, existing_generation);
    return txn.run(target, kind);
}

util::Expected<std::vector<spec::ShimSpec>> specs_of(const store::Generation& generation) {
    std::vector<spec::ShimSpec> specs;
    for (const auto& shim : generation.shims) {
        spec::ShimSpec spec;
        spec.name = shim.name;
        spec.handler = shim.handler;
        spec.runtime_type = shim.runtime_type;
        spec.binary = shim.binary;
        spec.version = shim.version;
        spec.fetch.url = shim.url;
        spec.fetch.sha256 = shim.digest;
        spec.location = {"generation " + std::to_string(generation.number), 0, 0};
        try {
            spec.options = toml::parse(shim.options_toml);
        } catch (const toml::parse_error& e) {
            return util::fail(util::ErrorCode::io,
                              "stored options of shim '" + shim.name + "' in generation " +
                                  std::to_string(generation.number) +
                                  " do not parse: " + std::string(e.description()));
        }
        specs.push_back(std::move(spec));
    }
    return specs;
}

} // namespace shimkeeper::reconcile
