// `shimkeeper bake --root DIR`: an offline install into an image root that is not running (a
// node image being built). The same transaction as `apply --no-restart` (fetch, verify, store,
// links, config edit with node paths, the generation recorded), so that at the image's first
// boot the daemon plans from exactly this and finds the node converged: no download, no
// containerd restart. Nothing is run inside the root and nothing talks to D-Bus or containerd:
// the version comes from the image's package database (or --containerd-version), and containerd's
// own `config dump` check is skipped (the candidate config is still re-parsed and compared key
// by key). Every check that can refuse runs before the first write, so a root without containerd,
// without the shimkeeper unit, or with a config shimkeeper cannot edit is left byte for byte as
// it was. `--root /` is accepted only inside a chroot (the image seen from inside it).
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/image_root.hpp"
#include "shimkeeper/cli/transaction_report.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/reconcile/node_plan.hpp"
#include "shimkeeper/reconcile/stage.hpp"
#include "shimkeeper/reconcile/transaction.hpp"
#include "shimkeeper/util/chroot.hpp"
#include "shimkeeper/util/remove_on_exit.hpp"

#include <iostream>

namespace shimkeeper::cli {

namespace {

util::Expected<int> bake(Context& ctx, const std::string& containerd_version) {
    if (ctx.root.root().empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "bake needs --root DIR, the image root to install into (on a running "
                          "node use `shimkeeper apply`)");
    }
    // Inside a chroot into the image (Ansible's chroot connection), the image root is "/".
    if (ctx.root.is_host() && !util::inside_chroot()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "bake --root / is only for a chroot into an image root (where "
                          "/proc/1/root is another directory, or there is no /proc), and here / "
                          "is the running system's: on a running node use `shimkeeper apply`");
    }
    // Read-only from here to the lock: every refusal leaves the root untouched.
    const auto version = TRY(image_containerd_version(ctx.root, containerd_version));
    const auto unit = TRY(packaged_unit(ctx.root));
    // Shim objects of a cluster are for the running node: an image bakes its files only.
    const auto desired = TRY(spec::gather({&ctx.files}));
    auto detection = TRY(containerd::detect(ctx.root, ctx.settings.containerd, {}, version));
    // The store's tamper records hold inode numbers and ctimes, which copying the image onto its
    // disk changes: the node would take every baked binary for edited by hand and download it
    // again. The image keeps none; the node records its own at first use.
    const util::RemoveOnExit fingerprints(ctx.store.state_dir() / "fingerprints");
    // Never run the image's binary (`config dump`): it may be for another architecture.
    detection.binary.clear();
    const auto state = TRY(ctx.store.load_state());
    const auto artifacts =
        TRY(reconcile::known_artifacts(desired.shims, state.current_generation(), ctx.store));
    TRY(reconcile::plan_node({ctx.root, ctx.store, detection}, desired.shims, artifacts, state));

    const auto lock = TRY(lock_node(ctx, "shimkeeper bake"));
    fetch::CurlDownloader downloader(ctx.output == OutputFormat::json
                                         ? fetch::ProgressStyle::none
                                         : fetch::progress_style_for_stderr());
    const reconcile::Node node{ctx.root,   ctx.settings, ctx.store, detection,
                               downloader, nullptr,      nullptr,   ctx.log};
    const auto outcome =
        TRY(reconcile::execute(node, desired.shims, "apply", reconcile::Restart::no));
    if (outcome.exit_code() != 0) {
        print_outcome(ctx, outcome, reconcile::Restart::no);
        return outcome.exit_code();
    }
    const auto enabled = TRY(enable_unit(ctx.root, unit));
    if (ctx.output == OutputFormat::json) {
        auto out = outcome_to_json(outcome);
        out["containerd_version"] = version.version.to_string();
        out["containerd_version_source"] = version.source;
        out["unit"] = unit.string();
        out["unit_enabled_now"] = enabled == Enabled::now;
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    std::cout << "containerd " << version.version.to_string() << " (" << version.source << ")\n";
    if (outcome.changed) {
        std::cout << "Baked generation " << outcome.generation << " into "
                  << ctx.root.on_host("/").string() << ".";
        for (const auto& change : outcome.plan.config_changes) {
            std::cout << " Wrote " << change.node_path.string() << ".";
        }
        std::cout << "\n";
    } else {
        std::cout << "Nothing to do: the image already holds generation " << outcome.generation
                  << ".\n";
    }
    std::cout << unit.filename().string()
              << (enabled == Enabled::now
                      ? " enabled (multi-user.target.wants -> " + unit.string() + ")."
                      : " already enabled.")
              << "\n";
    return 0;
}

} // namespace

int run_bake_command(const GlobalOptions& options, const std::string& containerd_version) {
    return run_with_context(
        options, [&containerd_version](Context& ctx) { return bake(ctx, containerd_version); });
}

} // namespace shimkeeper::cli
