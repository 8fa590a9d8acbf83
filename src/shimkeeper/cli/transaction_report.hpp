// How apply and rollback tell the operator what happened.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/reconcile/node_status.hpp"
#include "shimkeeper/reconcile/transaction.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

nlohmann::json outcome_to_json(const reconcile::Outcome& outcome);
// The daemon's status.json "result": the typed node status after a reconcile.
nlohmann::json node_status_to_json(const reconcile::NodeStatus& status);
void print_outcome(const Context& ctx, const reconcile::Outcome& outcome,
                   reconcile::Restart restart);

} // namespace shimkeeper::cli
