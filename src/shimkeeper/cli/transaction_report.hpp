// How apply and rollback tell the operator what happened.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/reconcile/transaction.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

nlohmann::json outcome_to_json(const reconcile::Outcome& outcome);
void print_outcome(const Context& ctx, const reconcile::Outcome& outcome,
                   reconcile::Restart restart);

} // namespace shimkeeper::cli
