#include "shimkeeper/cli/app.hpp"

#include <CLI/CLI.hpp>

namespace shimkeeper::cli {

int run_app(int argc, char** argv) {
    CLI::App app{"shimkeeper: keeps a node's containerd shims in a declared state"};
    app.require_subcommand(1);
    app.add_subcommand("version", "print the version")->callback([] {});
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    return 0;
}

} // namespace shimkeeper::cli
