#include "shimkeeper/cluster/agent/transaction_hooks.hpp"

namespace shimkeeper::cluster::agent {

util::Expected<spec::DesiredShims> TransactionHooks::admit(reconcile::Node& node,
                                                           const spec::DesiredShims& desired) {
    if (m_report) {
        m_report->attach(node);
    }
    reconcile::GuardedDesired guarded = TRY(reconcile::guard_removals(node, desired));
    m_blocked = std::move(guarded.blocked);
    m_gate = TRY(m_make_gate());
    if (!m_gate) {
        return std::move(guarded.desired);
    }
    spec::DesiredShims admitted = TRY(m_gate->admit(guarded.desired));
    RolloutGate::ReportCarrying report;
    if (m_report) {
        report = [this](const reconcile::NodePlan& plan, const store::StoreState& state,
                        std::vector<model::SlotHold> committing) {
            return m_report->before_change(plan, state, std::move(committing));
        };
    }
    m_gate->attach(node, std::move(report));
    return admitted;
}

const std::map<std::string, std::string>&
TransactionHooks::finish(const util::Expected<reconcile::Outcome>& outcome) {
    if (m_gate) {
        m_gate->finish(outcome, /*release_with_report=*/m_report != nullptr);
        m_waiting = m_gate->waiting();
    }
    return m_waiting;
}

util::Expected<void> TransactionHooks::tell(const spec::DesiredShims& desired,
                                            const util::Expected<reconcile::Outcome>& outcome,
                                            reconcile::Restart restart,
                                            std::optional<model::SlotRequests> requests) {
    if (!m_report) {
        return {};
    }
    std::vector<model::SlotHold> releases;
    if (m_gate) {
        releases = m_gate->take_releases();
    }
    util::Expected<void> told = m_report->after(desired, outcome, restart, m_waiting, m_blocked,
                                                std::move(requests), std::move(releases));
    if (m_gate) {
        m_gate->report_released(told);
    }
    return told;
}

} // namespace shimkeeper::cluster::agent
