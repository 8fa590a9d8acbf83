// `shimkeeper plan`: what apply would do, changing nothing.
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/format.hpp"
#include "shimkeeper/reconcile/plan.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

namespace {

nlohmann::json plan_to_json(const reconcile::Plan& plan) {
    nlohmann::json actions = nlohmann::json::array();
    for (const auto& a : plan.actions) {
        actions.push_back({{"action", reconcile::to_string(a.kind)},
                           {"name", a.name},
                           {"handler", a.handler},
                           {"from_version", a.from_version},
                           {"to_version", a.to_version},
                           {"from_digest", a.from_digest},
                           {"to_digest", a.to_digest},
                           {"staged", a.staged},
                           {"reasons", a.reasons}});
    }
    return {{"actions", actions}, {"converged", plan.converged()}};
}

void print_plan_text(const reconcile::Plan& plan) {
    for (const auto& a : plan.actions) {
        std::cout << reconcile::to_string(a.kind) << " " << a.name << " (handler " << a.handler
                  << ")";
        switch (a.kind) {
        case reconcile::ActionKind::install:
            std::cout << ": " << (a.to_version.empty() ? "" : a.to_version + " ")
                      << short_digest(a.to_digest);
            break;
        case reconcile::ActionKind::upgrade:
            std::cout << ": " << a.from_version << " " << short_digest(a.from_digest) << " -> "
                      << a.to_version << " " << short_digest(a.to_digest);
            break;
        case reconcile::ActionKind::unchanged:
            std::cout << ": " << a.to_version << " " << short_digest(a.to_digest);
            break;
        case reconcile::ActionKind::remove:
            std::cout << ": " << a.from_version << " " << short_digest(a.from_digest);
            break;
        }
        if (a.kind == reconcile::ActionKind::install || a.kind == reconcile::ActionKind::upgrade) {
            std::cout << (a.staged ? " [in store]" : " [download needed]");
        }
        for (const auto& reason : a.reasons) {
            std::cout << "\n    " << reason;
        }
        std::cout << "\n";
    }
    std::cout << "Plan: " << plan.count(reconcile::ActionKind::install) << " to install, "
              << plan.count(reconcile::ActionKind::upgrade) << " to upgrade, "
              << plan.count(reconcile::ActionKind::remove) << " to remove, "
              << plan.count(reconcile::ActionKind::unchanged) << " unchanged.\n";
    if (plan.converged()) {
        std::cout << "Nothing to do.\n";
    }
}

} // namespace

void add_plan_command(CLI::App& app, const GlobalOptions& options, int& exit_code) {
    auto* cmd = app.add_subcommand("plan", "show what apply would do; changes nothing");
    cmd->callback([&options, &exit_code] {
        exit_code = run_with_context(options, [](Context& ctx) -> util::Expected<int> {
            auto state = TRY(ctx.store.load_state());
            auto digests = ctx.store.artifact_digests();
            auto plan = reconcile::compute_plan(ctx.desired.shims, state.current_generation(),
                                                {digests.begin(), digests.end()});
            if (ctx.output == OutputFormat::json) {
                std::cout << plan_to_json(plan).dump(2) << "\n";
            } else {
                print_plan_text(plan);
            }
            return 0;
        });
    });
}

} // namespace shimkeeper::cli
