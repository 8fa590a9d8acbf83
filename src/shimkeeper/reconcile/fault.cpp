#include "shimkeeper/reconcile/fault.hpp"

#ifdef SHIMKEEPER_FAULT_INJECTION
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace shimkeeper::reconcile {

void fault_point(const char* step) {
    const char* wanted = std::getenv("SHIMKEEPER_FAULT");
    if (wanted != nullptr && std::strcmp(wanted, step) == 0) {
        std::raise(SIGKILL);
    }
}

} // namespace shimkeeper::reconcile
#endif
