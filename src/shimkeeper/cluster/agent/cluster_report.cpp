#include "shimkeeper/cluster/agent/cluster_report.hpp"

#include "shimkeeper/cluster/agent/running_shim.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/reconcile/fault.hpp"
#include "shimkeeper/util/utc_time.hpp"

namespace shimkeeper::cluster::agent {

namespace {

using model::NodeShimState;
using model::ShimState;

// The record of `name` in the current generation when a Shim installed it.
const store::InstalledShim* from_cluster(const store::StoreState& state, const std::string& name) {
    const store::InstalledShim* record = running(state, name);
    return record != nullptr && model::is_origin_of_shim(record->origin, name) ? record : nullptr;
}

model::NodeShimState state_of(model::ShimState state, long generation, std::string digest = {},
                              std::string reason = {}) {
    return {state, generation, std::move(digest), std::move(reason), util::now_rfc3339(), {}};
}

// Why a selecting, valid Shim is not among the desired shims: a file won (spec::gather's warning).
std::string conflict_reason(const spec::DesiredShims& desired, const std::string& name) {
    for (const auto& warning : desired.warnings) {
        if (warning.find("Shim/" + name + "@") != std::string::npos ||
            warning.find("Shim/" + name + " ") != std::string::npos) {
            return warning;
        }
    }
    return "a file in shims.d/ defines the same name, handler or binary: the node's own file wins";
}

// Every shimkeeper key the Node carries: those not reported again are dropped.
std::vector<std::string> all_known(const ClusterReading& reading) {
    const model::NodeShimKeys keys = model::shim_keys_of(reading.view.node);
    std::vector<std::string> out;
    for (const auto& [name, value] : keys.labels) {
        out.push_back(name);
    }
    for (const auto& [name, value] : keys.annotations) {
        out.push_back(name);
    }
    return out;
}

} // namespace

NodeReport report_before_change(const ClusterReading& reading, const reconcile::NodePlan& plan,
                                const store::StoreState& state) {
    NodeReport report;
    for (const auto& action : plan.shims.actions) {
        const ShimSeen* shim = reading.find(action.name);
        const long generation = shim ? shim->generation : 0;
        if (action.kind == reconcile::ActionKind::remove && from_cluster(state, action.name)) {
            const std::string why = shim && shim->selects ? "the Shim is being deleted"
                                                          : "the Shim no longer selects this node";
            report.wanted[action.name] = state_of(model::ShimState::removing, generation, {}, why);
        } else if ((action.kind == reconcile::ActionKind::install ||
                    action.kind == reconcile::ActionKind::upgrade) &&
                   shim != nullptr && shim->selects && !shim->deleting) {
            report.wanted[action.name] = state_of(model::ShimState::installing, generation);
        }
    }
    return report;
}

std::vector<std::string> labels_to_take_off_first(const ClusterReading& reading,
                                                  const reconcile::NodePlan& plan,
                                                  const NodeReport& before) {
    const model::NodeShimKeys keys = model::shim_keys_of(reading.view.node);
    std::vector<std::string> out;
    for (const auto& action : plan.shims.actions) {
        const auto wanted = before.wanted.find(action.name);
        const auto label = keys.labels.find(action.name);
        if (wanted != before.wanted.end() && wanted->second.state == ShimState::removing) {
            out.push_back("removing " + action.name);
        } else if (label != keys.labels.end() &&
                   (action.kind == reconcile::ActionKind::remove ||
                    ((action.kind == reconcile::ActionKind::install ||
                      action.kind == reconcile::ActionKind::upgrade) &&
                     label->second != action.handler))) {
            out.push_back("changing " + action.name + " from handler " + label->second +
                          (action.kind == reconcile::ActionKind::remove
                               ? " to none"
                               : " to handler " + action.handler));
        }
    }
    return out;
}

NodeReport report_after(const ClusterReading& reading, const spec::DesiredShims& desired,
                        const TxnSummary& txn, const store::StoreState& state,
                        reconcile::Restart restart,
                        const std::map<std::string, std::string>& waiting,
                        const reconcile::BlockedRemovals& blocked) {
    NodeReport report;
    report.forget = all_known(reading);
    std::erase_if(report.forget, [&](const std::string& name) { return waiting.contains(name); });
    for (const auto& shim : reading.shims) {
        if (waiting.contains(shim.name)) {
            continue; // not its turn yet: what the Node says of it stays true
        }
        report.forget.push_back(shim.name);
        const store::InstalledShim* record = from_cluster(state, shim.name);
        if (!shim.selects || shim.deleting) {
            if (const auto held = blocked.find(shim.name);
                held != blocked.end() && record != nullptr) {
                report.wanted[shim.name] = state_of(model::ShimState::removing, shim.generation,
                                                    record->digest, held->second.reason);
                report.blocked.insert(shim.name);
            } else if (record != nullptr) {
                // Still installed although it should go: the removal failed (and rolled back).
                report.wanted[shim.name] =
                    state_of(model::ShimState::failed, shim.generation, record->digest,
                             "removing failed: " + txn.reason);
            }
            continue;
        }
        const spec::ShimSpec* spec = desired_from(desired, shim.name);
        if (spec == nullptr) {
            report.wanted[shim.name] = state_of(model::ShimState::conflict, shim.generation, {},
                                                conflict_reason(desired, shim.name));
            continue;
        }
        if (!runs_exactly(record, *spec)) {
            report.wanted[shim.name] = state_of(model::ShimState::failed, shim.generation, {},
                                                txn.reason.empty() ? "not installed" : txn.reason);
        } else if (restart == reconcile::Restart::no && txn.touched.contains(shim.name)) {
            report.wanted[shim.name] =
                state_of(model::ShimState::installing, shim.generation, record->digest,
                         "applied with --no-restart: containerd loads it when it restarts");
        } else {
            NodeShimState installed =
                state_of(model::ShimState::installed, shim.generation, record->digest);
            installed.handler = record->handler; // proven served in CRI by the transaction
            installed.runtime_type = record->runtime_type; // the spec's, or derived on this node
            report.wanted[shim.name] = std::move(installed);
        }
    }
    return report;
}

NodeReport report_invalid(const ClusterReading& reading) {
    NodeReport report;
    for (const auto& shim : reading.shims) {
        if (!shim.invalid.empty()) {
            report.wanted[shim.name] =
                state_of(model::ShimState::failed, shim.generation, {}, shim.invalid);
        }
    }
    return report;
}

std::unique_ptr<ClusterReport> ClusterReport::create(const ClusterSource& cluster,
                                                     const store::Store& store,
                                                     const util::Log& log) {
    if (!cluster.last_reading()) {
        return nullptr;
    }
    return std::unique_ptr<ClusterReport>(
        new ClusterReport(cluster, store, log, *cluster.last_reading()));
}

util::Expected<bool> ClusterReport::before_change(const reconcile::NodePlan& plan,
                                                  const store::StoreState& state,
                                                  std::vector<model::SlotHold> committing) {
    if (reconcile::fault_switch("handler-before-label")) {
        return false; // the broken order, for tests of the tests only (fault.hpp)
    }
    NodeReport report = report_before_change(m_reading, plan, state);
    if (reconcile::fault_switch("label-before-serving")) { // tests only (fault.hpp)
        for (const auto& action : plan.shims.actions) {
            auto found = report.wanted.find(action.name);
            if (found != report.wanted.end() && found->second.state == ShimState::installing) {
                found->second.state = ShimState::installed;
                found->second.handler = action.handler; // labelled before containerd serves it
            }
        }
    }
    report.committing = std::move(committing);
    util::Expected<void> sent;
    if (reconcile::fault_switch("label-patch-fails")) { // tests only (fault.hpp)
        sent = util::fail(util::ErrorCode::network,
                          "SHIMKEEPER_FAULT_SWITCH=label-patch-fails: the Node report before the "
                          "change was not sent");
    } else {
        sent = m_reporter.publish(report);
    }
    if (sent) {
        return !report.committing.empty();
    }
    const auto must_go = labels_to_take_off_first(m_reading, plan, report);
    if (!must_go.empty()) {
        // The RuntimeClass selects the label's value: kept, it would select this node for a
        // handler its containerd is about to stop serving. The node changes nothing this time.
        return std::unexpected(
            std::move(sent.error())
                .with_context("taking the label off before " + must_go.front() +
                              " (nothing was changed; a later run tries again)"));
    }
    m_log.warning(sent.error().message());
    return false;
}

void ClusterReport::attach(reconcile::Node& node) {
    node.before_change = [this](const reconcile::NodePlan& plan,
                                const store::StoreState& state) -> util::Expected<void> {
        TRY(before_change(plan, state));
        return {};
    };
}

util::Expected<void> ClusterReport::after(const spec::DesiredShims& desired,
                                          const util::Expected<reconcile::Outcome>& outcome,
                                          reconcile::Restart restart,
                                          const std::map<std::string, std::string>& waiting,
                                          const reconcile::BlockedRemovals& blocked,
                                          std::optional<model::SlotRequests> requests,
                                          std::vector<model::SlotHold> releases) {
    const TxnSummary txn =
        outcome ? TxnSummary::of(*outcome) : TxnSummary::refused(outcome.error());
    const store::StoreState state = TRY(m_store.load_state());
    NodeReport report = report_after(m_reading, desired, txn, state, restart, waiting, blocked);
    report.requests = std::move(requests);
    if (!releases.empty() && reconcile::fault_switch("report-after-fails")) { // tests (fault.hpp)
        return util::fail(util::ErrorCode::conflict,
                          "SHIMKEEPER_FAULT_SWITCH=report-after-fails: the Node report after the "
                          "transaction was not sent, as if the API server refused it");
    }
    report.releases = std::move(releases);
    return m_reporter.publish(report);
}

TxnSummary TxnSummary::of(const reconcile::Outcome& outcome) {
    TxnSummary out;
    if (outcome.result != reconcile::TxnResult::committed) {
        out.reason = outcome.reason;
    }
    for (const auto& action : outcome.plan.shims.actions) {
        if (action.kind != reconcile::ActionKind::unchanged) {
            out.touched.insert(action.name);
        }
    }
    return out;
}

TxnSummary TxnSummary::refused(const util::Error& error) {
    TxnSummary out;
    out.reason = error.message();
    return out;
}

util::Expected<void> ClusterReport::after_invalid() {
    return m_reporter.publish(report_invalid(m_reading));
}

} // namespace shimkeeper::cluster::agent
