// One function per subcommand (cmd_<name>.cpp): runs it with its parsed options and returns the
// process exit code. The command line itself (CLI11) is app.cpp's alone: its header-only code
// costs several seconds of compile time in every file that includes it.
#pragma once

#include "shimkeeper/cli/context.hpp"
#include "shimkeeper/reconcile/node.hpp"

#include <string>

namespace shimkeeper::cli {

int run_version_command(const GlobalOptions& options);
int run_plan_command(const GlobalOptions& options);
int run_fetch_command(const GlobalOptions& options);
// daemon_status_file: the daemon's status file (run's --status-file, under --root).
int run_status_command(const GlobalOptions& options, const std::string& daemon_status_file);
int run_apply_command(const GlobalOptions& options, reconcile::Restart restart);
int run_rollback_command(const GlobalOptions& options, reconcile::Restart restart);
// status_file: where the daemon keeps its state as JSON (under --root).
int run_run_command(const GlobalOptions& options, const std::string& status_file,
                    reconcile::Restart restart);
int run_reset_command(const GlobalOptions& options, reconcile::Restart restart);
// containerd_version: the image's, or empty to read it from the image's dpkg status.
int run_bake_command(const GlobalOptions& options, const std::string& containerd_version);
// identity: this candidate's holderIdentity, or empty for the host's name and a random suffix.
// listen: --listen's ADDRESS:PORT for /healthz, /readyz and /metrics; empty: none served.
int run_coordinate_command(const GlobalOptions& options, const std::string& identity,
                           const std::string& listen);

// Runs a command body with a fresh Context; reports an Error on stderr and maps it to an exit code.
int run_with_context(const GlobalOptions& options,
                     const std::function<util::Expected<int>(Context&)>& body);

} // namespace shimkeeper::cli
