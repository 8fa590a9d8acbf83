#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/reconcile/fault.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

void add_version_command(CLI::App& app, const GlobalOptions& options, int& exit_code) {
    auto* cmd = app.add_subcommand("version", "print shimkeeper's version");
    cmd->callback([&options, &exit_code] {
        if (options.output == "json") {
            nlohmann::json out{{"version", SHIMKEEPER_VERSION}};
#ifdef SHIMKEEPER_FAULT_INJECTION
            out["fault_points"] = reconcile::k_fault_points;
            out["fault_skips"] = reconcile::k_fault_skips;
#endif
            std::cout << out.dump() << "\n";
        } else {
            std::cout << "shimkeeper " << SHIMKEEPER_VERSION << "\n";
        }
        exit_code = 0;
    });
}

} // namespace shimkeeper::cli
