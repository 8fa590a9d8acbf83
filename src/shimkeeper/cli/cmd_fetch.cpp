// `shimkeeper fetch`: download, verify and unpack every desired shim into the store.
// Touches neither containerd nor its config, nor bin/ nor the generation state.
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/format.hpp"
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/fetch/curl_downloader.hpp"
#include "shimkeeper/reconcile/stage.hpp"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

namespace {

util::Expected<int> fetch_all(Context& ctx) {
    fetch::CurlDownloader downloader(ctx.output == OutputFormat::json
                                         ? fetch::ProgressStyle::none
                                         : fetch::progress_style_for_stderr());
    reconcile::StageOptions stage_options;
    stage_options.fetch = ctx.settings.fetch;
    const auto desired = TRY(ctx.load_desired());
    const bool any_oci = std::ranges::any_of(
        desired.shims, [](const spec::ShimSpec& shim) { return !shim.fetch.oci.empty(); });
    if (any_oci && !ctx.settings.fetch.registry_config_path) {
        // containerd's registry hosts, when its config can be read: fetch works without one.
        if (auto detected = containerd::detect(ctx.root, ctx.settings.containerd)) {
            stage_options.containerd_registry_hosts = detected->registry_config_path;
        }
    }
    const auto lock = TRY(lock_node(ctx, "shimkeeper fetch"));
    const auto state = TRY(ctx.store.load_state());

    nlohmann::json results = nlohmann::json::array();
    int failures = 0;
    int exit_code = 0;
    for (const spec::ShimSpec& shim : desired.shims) {
        const util::Log shim_log = ctx.log.with({.shim = shim.name, .handler = shim.handler});
        auto staged = reconcile::stage_shim(
            shim, reconcile::known_digest(shim, state.current_generation(), ctx.store), ctx.store,
            downloader, stage_options, shim_log);
        if (!staged) {
            ++failures;
            exit_code = std::max(exit_code, staged.error().exit_code());
            shim_log.error(staged.error().message());
            results.push_back(
                {{"name", shim.name}, {"ok", false}, {"error", staged.error().message()}});
            continue;
        }
        results.push_back({{"name", shim.name},
                           {"ok", true},
                           {"digest", staged->digest},
                           {"binary", staged->binary_path},
                           {"downloaded", staged->downloaded},
                           {"bytes", staged->size}});
        if (ctx.output == OutputFormat::text) {
            std::cout << shim.name << ": " << short_digest(staged->digest) << " "
                      << (staged->downloaded ? "fetched (" + human_size(staged->size) + ")"
                                             : std::string("already in the store, no download"))
                      << " -> " << ctx.store.artifact_dir(staged->digest).string() << "\n";
        }
    }
    if (ctx.output == OutputFormat::json) {
        std::cout << nlohmann::json{{"shims", results}, {"failed", failures}}.dump(2) << "\n";
    } else if (desired.shims.empty()) {
        std::cout << "No shims are declared: nothing to fetch.\n";
    } else if (failures > 0) {
        std::cout << failures << " of " << desired.shims.size()
                  << " shims could not be fetched; the store holds only complete artifacts.\n";
    }
    return exit_code;
}

} // namespace

int run_fetch_command(const GlobalOptions& options) {
    return run_with_context(options, fetch_all);
}

} // namespace shimkeeper::cli
