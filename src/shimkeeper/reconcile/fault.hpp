// Crash points for recovery tests. Compiled in only with -DSHIMKEEPER_FAULT_INJECTION=ON:
// SHIMKEEPER_FAULT=<step> makes the process SIGKILL itself when it reaches that step;
// SHIMKEEPER_FAULT_RUN=<step>:<command> runs a shell command there (another writer's edit).
#pragma once

#include <array>
#include <string_view>

namespace shimkeeper::reconcile {

// Every fault point of a changing transaction, in the order they are reached: the staging steps
// fire inside stage_shim (after the download, the pre-flight run and the store commit), the
// others after their change and before the journal records it. `version -o json` lists them
// in fault-injection builds, so the crash test reads them from the binary.
inline constexpr std::array<std::string_view, 9> k_fault_points = {
    "fetch", "preflight", "store", "planned", "links", "config", "restart", "health", "commit"};

#ifdef SHIMKEEPER_FAULT_INJECTION
void fault_point(const char* step);
#else
inline void fault_point(const char*) {}
#endif

} // namespace shimkeeper::reconcile
