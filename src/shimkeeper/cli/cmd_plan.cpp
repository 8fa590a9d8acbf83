// `shimkeeper plan`: what apply would do, changing nothing.
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/format.hpp"
#include "shimkeeper/cli/oci_source.hpp"
#include "shimkeeper/cli/status_cluster.hpp"
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/diff.hpp"
#include "shimkeeper/containerd/plan.hpp"
#include "shimkeeper/containerd/report.hpp"
#include "shimkeeper/containerd/runtime_entry.hpp"
#include "shimkeeper/reconcile/derive_runtime.hpp"
#include "shimkeeper/reconcile/node_plan.hpp"
#include "shimkeeper/reconcile/recovery.hpp"
#include "shimkeeper/reconcile/stage.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

namespace {

const spec::ShimSpec* desired_named(const std::vector<spec::ShimSpec>& shims,
                                    const std::string& name) {
    for (const auto& shim : shims) {
        if (shim.name == name) {
            return &shim;
        }
    }
    return nullptr;
}

nlohmann::json plan_to_json(const reconcile::NodePlan& node_plan,
                            const containerd::Detection& detection,
                            const std::vector<spec::ShimSpec>& desired, const store::Store& store) {
    const reconcile::Plan& plan = node_plan.shims;
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
        const spec::ShimSpec* shim = desired_named(desired, a.name);
        actions.back()["oci"] = shim ? oci_source_json(shim->fetch, store) : nullptr;
        actions.back()["runtime_type"] = shim ? nlohmann::json(shim->runtime_type) : nullptr;
        actions.back()["runtime_type_derivation"] =
            shim && !shim->runtime_type_derivation.empty()
                ? nlohmann::json(shim->runtime_type_derivation)
                : nullptr;
    }
    auto config_json = containerd::plan_json(detection, node_plan.config_changes);
    nlohmann::json links = nlohmann::json::array();
    for (const auto& link : node_plan.links) {
        links.push_back({{"binary", link.binary},
                         {"from", link.before ? nlohmann::json(*link.before) : nullptr},
                         {"to", link.after ? nlohmann::json(*link.after) : nullptr}});
    }
    return {{"containerd", containerd::detection_json(detection)},
            {"actions", actions},
            {"links", links},
            {"config_changes", config_json["files"]},
            {"restart_needed", config_json["restart_needed"]},
            {"new_generation", plan.new_generation},
            {"converged", node_plan.converged()}};
}

void print_plan_text(const reconcile::NodePlan& node_plan, const containerd::Detection& detection,
                     const std::vector<spec::ShimSpec>& desired, const store::Store& store) {
    const reconcile::Plan& plan = node_plan.shims;
    std::cout << "containerd "
              << (detection.binary_version ? detection.binary_version->to_string()
                                           : std::string("(version unknown)"))
              << ", config version " << detection.config_version << ", "
              << (detection.mode == containerd::Detection::Mode::drop_in ? "drop-in "
                                                                         : "edits in place ")
              << detection.target_path.string() << "\n";
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
        if (const spec::ShimSpec* shim = desired_named(desired, a.name)) {
            if (!shim->runtime_type_derivation.empty()) {
                std::cout << "\n    runtime type " << shim->runtime_type << ", "
                          << shim->runtime_type_derivation;
            }
            for (const auto& line : oci_source_lines(shim->fetch, store)) {
                std::cout << "\n    " << line;
            }
        }
        std::cout << "\n";
    }
    std::cout << "Plan: " << plan.count(reconcile::ActionKind::install) << " to install, "
              << plan.count(reconcile::ActionKind::upgrade) << " to upgrade, "
              << plan.count(reconcile::ActionKind::remove) << " to remove, "
              << plan.count(reconcile::ActionKind::unchanged) << " unchanged.\n";
    for (const auto& change : node_plan.config_changes) {
        std::cout << "\n" << containerd::unified_diff(change);
    }
    if (node_plan.converged()) {
        std::cout << "Nothing to do.\n";
        return;
    }
    if (plan.new_generation) {
        std::cout << "A new generation will be recorded.\n";
    }
    std::cout << "containerd restart: " << (node_plan.restart_needed ? "needed" : "not needed")
              << "\n";
}

} // namespace

int run_plan_command(const GlobalOptions& options) {
    return run_with_context(options, [](Context& ctx) -> util::Expected<int> {
        // The same inputs and the same function as apply's (reconcile/node_plan.hpp); apply
        // only knows more digests, after downloading what `[download needed]` marks.
        const auto loaded = ctx.load_desired();
        const auto cluster = cluster_status_json(ctx, loaded);
        if (!loaded && ctx.output == OutputFormat::text) {
            print_cluster_status(cluster);
        }
        auto desired = TRY(loaded);
        const auto state = TRY(ctx.store.load_state());
        const auto detection = TRY(containerd::detect(ctx.root, ctx.settings.containerd));
        // A runtime type only the artifact says is read from the store when it is held;
        // else the plan shows the handler's guess and says so (no download in a plan).
        desired.shims = TRY(reconcile::derive_runtime_types(
            desired.shims, state.current_generation(), ctx.store, nullptr));
        const auto artifacts =
            TRY(reconcile::known_artifacts(desired.shims, state.current_generation(), ctx.store));
        const auto plan = TRY(reconcile::plan_node({ctx.root, ctx.store, detection}, desired.shims,
                                                   artifacts, state));
        const bool recovery_pending = reconcile::recovery_pending(ctx.store);
        if (ctx.output == OutputFormat::json) {
            auto out = plan_to_json(plan, detection, desired.shims, ctx.store);
            out["recovery_pending"] = recovery_pending;
            out["cluster"] = cluster;
            std::cout << out.dump(2) << "\n";
        } else {
            if (recovery_pending) {
                std::cout << "An interrupted transaction will be recovered first; the plan "
                             "below is read from the node as the crash left it.\n";
            }
            print_cluster_status(cluster);
            print_plan_text(plan, detection, desired.shims, ctx.store);
        }
        return 0;
    });
}

} // namespace shimkeeper::cli
