#include "shimkeeper/cli/app.hpp"

#include "shimkeeper/cli/commands.hpp"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

namespace shimkeeper::cli {

int run_with_context(const GlobalOptions& options,
                     const std::function<util::Expected<int>(Context&)>& body) {
    auto context = make_context(options);
    if (!context) {
        std::cerr << "shimkeeper: " << context.error().message() << "\n";
        return context.error().exit_code();
    }
    auto result = body(*context);
    if (!result) {
        std::cerr << "shimkeeper: " << result.error().message() << "\n";
        return result.error().exit_code();
    }
    return *result;
}

int run_app(int argc, char** argv) {
    CLI::App app{"shimkeeper: keeps a node's containerd shims in a declared state.\n"
                 "Exit codes: 0 ok, 1 the operation failed, 2 bad input or usage."};
    app.set_version_flag("--version", SHIMKEEPER_VERSION);
    app.require_subcommand(1);
    app.fallthrough(); // global options may follow the subcommand: `shimkeeper plan -o json`
    GlobalOptions options;
    app.add_option("-c,--config", options.config,
                   "agent config file (default /etc/shimkeeper/shimkeeper.toml under --root); "
                   "shims.d/ beside it holds drop-ins");
    app.add_option("--root", options.root,
                   "prefix for every host path (image bakes, sandboxes, tests)");
    app.add_option("-o,--output", options.output, "output format: text or json")
        ->check(CLI::IsMember({"text", "json"}));
    app.add_option("--log-level", options.log_level, "debug, info, warning or error")
        ->check(CLI::IsMember({"debug", "info", "warning", "warn", "error"}));
    app.add_flag("--no-wait", options.no_wait,
                 "when another run holds the node lock, fail at once (exit 1) instead of waiting");
    app.add_option("--lock-timeout", options.lock_timeout,
                   "seconds to wait for the node lock held by another run (default 600)")
        ->check(CLI::Range(0.0, 86400.0));

    int exit_code = 0;
    add_version_command(app, options, exit_code);
    add_plan_command(app, options, exit_code);
    add_fetch_command(app, options, exit_code);
    add_status_command(app, options, exit_code);
    add_apply_command(app, options, exit_code);
    add_rollback_command(app, options, exit_code);
    add_run_command(app, options, exit_code);
    add_reset_command(app, options, exit_code);
    add_bake_command(app, options, exit_code);
    add_coordinate_command(app, options, exit_code);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    } catch (const std::exception& e) {
        std::cerr << "shimkeeper: internal error: " << e.what() << "\n";
        return 1;
    }
    return exit_code;
}

} // namespace shimkeeper::cli
