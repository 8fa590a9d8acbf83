#include "shimkeeper/cli/commands.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

void add_version_command(CLI::App& app, const GlobalOptions& options, int& exit_code) {
    auto* cmd = app.add_subcommand("version", "print shimkeeper's version");
    cmd->callback([&options, &exit_code] {
        if (options.output == "json") {
            std::cout << nlohmann::json{{"version", SHIMKEEPER_VERSION}}.dump() << "\n";
        } else {
            std::cout << "shimkeeper " << SHIMKEEPER_VERSION << "\n";
        }
        exit_code = 0;
    });
}

} // namespace shimkeeper::cli
