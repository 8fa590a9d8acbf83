#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/reconcile/fault.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

int run_version_command(const GlobalOptions& options) {
    if (options.output == "json") {
        nlohmann::json out{{"version", SHIMKEEPER_VERSION}};
#ifdef SHIMKEEPER_FAULT_INJECTION
        out["fault_points"] = reconcile::k_fault_points;
        out["fault_switches"] = reconcile::k_fault_switches;
#endif
        std::cout << out.dump() << "\n";
    } else {
        std::cout << "shimkeeper " << SHIMKEEPER_VERSION << "\n";
    }
    return 0;
}

} // namespace shimkeeper::cli
