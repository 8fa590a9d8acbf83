#include "shimkeeper/cli/transaction_report.hpp"

#include <iostream>

namespace shimkeeper::cli {

nlohmann::json outcome_to_json(const reconcile::Outcome& outcome) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& change : outcome.plan.config_changes) {
        files.push_back(change.node_path.string());
    }
    nlohmann::json shims = nlohmann::json::array();
    for (const auto& action : outcome.plan.shims.actions) {
        shims.push_back({{"name", action.name},
                         {"handler", action.handler},
                         {"action", reconcile::to_string(action.kind)},
                         {"from_digest", action.from_digest},
                         {"to_digest", action.to_digest},
                         {"reasons", action.reasons}});
    }
    return {{"result", reconcile::to_string(outcome.result)},
            {"changed", outcome.changed},
            {"generation", outcome.generation},
            {"reason", outcome.reason},
            {"restarts", outcome.restarts},
            {"shims", shims},
            {"config_files", files}};
}

nlohmann::json node_status_to_json(const reconcile::NodeStatus& status) {
    nlohmann::json shims = nlohmann::json::array();
    for (const auto& shim : status.shims) {
        shims.push_back({{"name", shim.name},
                         {"handler", shim.handler},
                         {"action", reconcile::to_string(shim.action)},
                         {"installed", shim.installed},
                         {"version", shim.version},
                         {"digest", shim.digest}});
    }
    std::vector<std::string> handlers;
    for (const auto& shim : status.installed) {
        handlers.push_back(shim.handler);
    }
    return {{"result", reconcile::to_string(status.result)},
            {"changed", status.changed},
            {"generation", status.generation},
            {"reason", status.reason},
            {"restarts", status.restarts},
            {"handlers", handlers},
            {"shims", shims},
            {"config_files", status.config_files}};
}

void print_outcome(const Context& ctx, const reconcile::Outcome& outcome,
                   reconcile::Restart restart) {
    if (ctx.output == OutputFormat::json) {
        std::cout << outcome_to_json(outcome).dump(2) << "\n";
        return;
    }
    if (!outcome.changed) {
        std::cout << "Nothing to do: the node already matches generation " << outcome.generation
                  << ".\n";
        return;
    }
    switch (outcome.result) {
    case reconcile::TxnResult::committed:
        std::cout << "Committed generation " << outcome.generation << ".";
        for (const auto& change : outcome.plan.config_changes) {
            std::cout << " Wrote " << change.node_path.string() << ".";
        }
        if (outcome.restarts > 0) {
            std::cout << " containerd restarted and healthy.";
        } else if (!outcome.plan.config_changes.empty() && restart == reconcile::Restart::no) {
            std::cout << " containerd was NOT restarted (--no-restart): restart it to load the "
                         "new config.";
        }
        std::cout << "\n";
        break;
    case reconcile::TxnResult::rolled_back:
        std::cout << "Rolled back: " << outcome.reason << "\nThe node is back at generation "
                  << outcome.generation << ".\n";
        break;
    case reconcile::TxnResult::rollback_failed:
        std::cout << "FAILED and the rollback failed too: " << outcome.reason
                  << "\nInspect containerd (systemctl status, journalctl) and run "
                     "`shimkeeper status`.\n";
        break;
    case reconcile::TxnResult::failed:
    case reconcile::TxnResult::in_progress:
        std::cout << "Failed: " << outcome.reason << "\n";
        break;
    }
}

} // namespace shimkeeper::cli
