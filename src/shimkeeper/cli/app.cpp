#include "shimkeeper/cli/app.hpp"

#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/daemon/status_file.hpp"

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

    // Each subcommand's options, then its run function (commands.hpp) as its callback.
    int exit_code = 0;
    const auto on_run = [&exit_code](CLI::App* cmd, std::function<int()> run) {
        cmd->callback([&exit_code, run = std::move(run)] { exit_code = run(); });
    };
    on_run(app.add_subcommand("version", "print shimkeeper's version"),
           [&options] { return run_version_command(options); });
    on_run(app.add_subcommand("plan", "show what apply would do; changes nothing"),
           [&options] { return run_plan_command(options); });
    on_run(app.add_subcommand("fetch", "download, verify and unpack every desired shim into the "
                                       "store; touches neither containerd nor its config"),
           [&options] { return run_fetch_command(options); });
    auto* status = app.add_subcommand(
        "status", "installed shims, generations, the store, the cluster and the daemon");
    std::string daemon_status_file = daemon::k_default_status_file;
    status
        ->add_option("--status-file", daemon_status_file,
                     "where the daemon keeps its state (run's --status-file, under --root)")
        ->capture_default_str();
    on_run(status, [&options, &daemon_status_file] {
        return run_status_command(options, daemon_status_file);
    });

    bool no_restart = false; // --no-restart of apply, rollback, run and reset (one is chosen)
    const auto restart = [&no_restart] {
        return no_restart ? reconcile::Restart::no : reconcile::Restart::yes;
    };
    auto* apply = app.add_subcommand(
        "apply", "one reconcile, then exit: 0 converged, 1 failed and rolled back, 2 bad input");
    apply->add_flag("--no-restart", no_restart,
                    "fetch, store, switch links and edit containerd's config, but leave the "
                    "restart to the operator");
    on_run(apply, [&options, restart] { return run_apply_command(options, restart()); });

    auto* rollback = app.add_subcommand("rollback", "go back to the previous generation");
    rollback->add_flag("--no-restart", no_restart, "switch files only; do not restart containerd");
    on_run(rollback, [&options, restart] { return run_rollback_command(options, restart()); });

    auto* run = app.add_subcommand(
        "run", "the daemon: keeps the node converged (systemd Type=notify, watchdog)");
    std::string status_file = daemon::k_default_status_file;
    run->add_option("--status-file", status_file,
                    "where the current state is kept as JSON (under --root)")
        ->capture_default_str();
    run->add_flag("--no-restart", no_restart,
                  "change files only and leave containerd's restart to the operator, as "
                  "`apply --no-restart` (nodes whose restarts another tool owns; benchmarks)");
    on_run(run, [&options, &status_file, restart] {
        return run_run_command(options, status_file, restart());
    });

    auto* reset = app.add_subcommand(
        "reset", "restore the node: remove every managed block, created file and bin/ link "
                 "(one containerd restart, health checked), then delete the store");
    reset->add_flag("--no-restart", no_restart,
                    "edit files and delete the store, but leave the restart to the operator");
    on_run(reset, [&options, restart] { return run_reset_command(options, restart()); });

    auto* bake = app.add_subcommand(
        "bake", "offline install into an image root (--root DIR): fetch, store, links, config, "
                "unit enabled; restarts nothing");
    std::string containerd_version;
    bake->add_option("--containerd-version", containerd_version,
                     "the image's containerd version (default: from DIR/var/lib/dpkg/status)");
    on_run(bake, [&options, &containerd_version] {
        return run_bake_command(options, containerd_version);
    });

    auto* coordinate = app.add_subcommand(
        "coordinate", "run the cluster-wide coordinator (RuntimeClasses, Shim status, "
                      "finalizers, rollout slots) with its own identity; one of several leads");
    std::string identity;
    coordinate->add_option("--identity", identity,
                           "this candidate's name in the Lease's holderIdentity (default: the "
                           "host's name and a random suffix); unique among the coordinators");
    std::string listen;
    coordinate->add_option("--listen", listen,
                           "serve /healthz, /readyz and Prometheus /metrics on ADDRESS:PORT "
                           "(0.0.0.0:8080, [::1]:8080, :8080 for every IPv4 address); default: "
                           "no endpoint");
    on_run(coordinate, [&options, &identity, &listen] {
        return run_coordinate_command(options, identity, listen);
    });

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
