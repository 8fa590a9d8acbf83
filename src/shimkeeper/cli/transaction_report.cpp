#include "shimkeeper/cli/transaction_report.hpp"

#include <iostream>

namespace shimkeeper::cli {

nlohmann::json outcome_to_json(const reconcile::Outcome& outcome) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& change : outcome.config_changes) {
        files.push_back(change.node_path.string());
    }
    return {{"result", reconcile::to_string(outcome.result)},
            {"changed", outcome.changed},
            {"generation", outcome.generation},
            {"reason", outcome.reason},
            {"restarts", outcome.restarts},
            {"config_files", files}};
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
        for (const auto& change : outcome.config_changes) {
            std::cout << " Wrote " << change.node_path.string() << ".";
        }
        if (outcome.restarts > 0) {
            std::cout << " containerd restarted and healthy.";
        } else if (!outcome.config_changes.empty() && restart == reconcile::Restart::no) {
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
