#include "shimkeeper/reconcile/fault.hpp"

#ifdef SHIMKEEPER_FAULT_INJECTION
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace shimkeeper::reconcile {

void fault_point(const char* step) {
    const char* wanted = std::getenv("SHIMKEEPER_FAULT");
    if (wanted != nullptr && std::strcmp(wanted, step) == 0) {
        std::raise(SIGKILL);
    }
    // SHIMKEEPER_FAULT_RUN="<step>:<shell command>": another writer acting at exactly that
    // moment (the concurrency tests edit a config between the plan and the write). "*:<command>"
    // runs it at every step, with $SHIMKEEPER_FAULT_STEP naming the step (a recorder of when
    // transactions pass their steps).
    const char* run = std::getenv("SHIMKEEPER_FAULT_RUN");
    if (run != nullptr) {
        const std::string_view spec(run);
        const auto colon = spec.find(':');
        const std::string_view wanted_step = spec.substr(0, colon);
        if (colon != std::string_view::npos && (wanted_step == step || wanted_step == "*")) {
            const std::string command = "SHIMKEEPER_FAULT_STEP=" + std::string(step) +
                                        "; export SHIMKEEPER_FAULT_STEP; " +
                                        std::string(spec.substr(colon + 1));
            if (std::system(command.c_str()) != 0) {
                std::raise(SIGKILL); // a hook that failed would make the test meaningless
            }
        }
    }
}

bool fault_switch(std::string_view name) {
    const char* on = std::getenv("SHIMKEEPER_FAULT_SWITCH");
    if (on == nullptr) {
        return false;
    }
    std::string_view rest(on); // "a" or "a,b,..."
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        if (rest.substr(0, comma) == name) {
            return true;
        }
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
}

} // namespace shimkeeper::reconcile
#endif
