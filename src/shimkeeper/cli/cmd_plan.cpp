// `shimkeeper plan`: what apply would do, changing nothing.
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/format.hpp"
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/diff.hpp"
#include "shimkeeper/containerd/plan.hpp"
#include "shimkeeper/containerd/report.hpp"
#include "shimkeeper/containerd/runtime_entry.hpp"
#include "shimkeeper/reconcile/plan.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

namespace {

// The digest the config's marker will name: known from the spec, or (unverified shims) from the
// installed generation while the URL is unchanged; otherwise only a download would tell.
std::string expected_digest(const spec::ShimSpec& shim, const store::Generation* current) {
    if (shim.fetch.sha256) {
        return *shim.fetch.sha256;
    }
    const store::InstalledShim* have = current ? current->find(shim.name) : nullptr;
    return have != nullptr && have->url == shim.fetch.url ? have->digest : "unverified";
}

struct ConfigPlan {
    containerd::Detection detection;
    std::vector<containerd::FileChange> changes;
    bool restart = false;
};

util::Expected<ConfigPlan> plan_config(const Context& ctx, const store::Generation* current) {
    auto detection = TRY(containerd::detect(ctx.root, ctx.desired.settings.containerd));
    std::vector<containerd::DesiredRuntime> runtimes;
    for (const auto& shim : ctx.desired.shims) {
        runtimes.push_back(containerd::desired_runtime(shim, ctx.desired.settings.store.dir,
                                                       expected_digest(shim, current)));
    }
    ConfigPlan plan;
    plan.detection = detection;
    plan.changes = TRY(containerd::plan_edits(detection, runtimes, ctx.root));
    plan.restart = containerd::needs_restart(detection, plan.changes);
    return plan;
}

nlohmann::json plan_to_json(const reconcile::Plan& plan, const ConfigPlan& config) {
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
    auto config_json = containerd::plan_json(config.detection, config.changes);
    return {{"actions", actions},
            {"config_changes", config_json["files"]},
            {"restart_needed", config_json["restart_needed"]},
            {"converged", plan.converged() && config.changes.empty()}};
}

void print_plan_text(const reconcile::Plan& plan, const ConfigPlan& config) {
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
    for (const auto& change : config.changes) {
        std::cout << "\n" << containerd::unified_diff(change);
    }
    if (plan.converged() && config.changes.empty()) {
        std::cout << "Nothing to do.\n";
    } else {
        std::cout << "containerd restart: " << (config.restart ? "needed" : "not needed") << "\n";
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
            auto config = TRY(plan_config(ctx, state.current_generation()));
            if (ctx.output == OutputFormat::json) {
                std::cout << plan_to_json(plan, config).dump(2) << "\n";
            } else {
                print_plan_text(plan, config);
            }
            return 0;
        });
    });
}

} // namespace shimkeeper::cli
