// One function per subcommand (cmd_<name>.cpp): registers it on the app. The callback stores the
// command's exit code in `exit_code`.
#pragma once

#include "shimkeeper/cli/context.hpp"

#include <CLI/CLI.hpp>

namespace shimkeeper::cli {

void add_version_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_plan_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_fetch_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_status_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_apply_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_rollback_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_run_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_reset_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_bake_command(CLI::App& app, const GlobalOptions& options, int& exit_code);
void add_coordinate_command(CLI::App& app, const GlobalOptions& options, int& exit_code);

// Runs a command body with a fresh Context; reports an Error on stderr and maps it to an exit code.
int run_with_context(const GlobalOptions& options,
                     const std::function<util::Expected<int>(Context&)>& body);

} // namespace shimkeeper::cli
