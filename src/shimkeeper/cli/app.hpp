// The command line: global options, one subcommand per file (cmd_*.cpp).
#pragma once

namespace shimkeeper::cli {

// Parses argv, runs the chosen command, returns the process exit code:
// 0 ok, 1 the operation failed, 2 bad input or usage.
int run_app(int argc, char** argv);

} // namespace shimkeeper::cli
