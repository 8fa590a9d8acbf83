// Crash points for recovery tests. Compiled in only with -DSHIMKEEPER_FAULT_INJECTION=ON:
// SHIMKEEPER_FAULT=<step> makes the process SIGKILL itself when it reaches that step;
// SHIMKEEPER_FAULT_RUN=<step>:<command> runs a shell command there (another writer's edit);
// SHIMKEEPER_FAULT_SKIP=<rule> makes a deliberately broken build that breaks that rule, so that
// the tests of the tests can watch each check fail (a test that cannot fail proves nothing).
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

// Rules SHIMKEEPER_FAULT_SKIP can break:
//   slot-wait   a rolling Shim changes on a node that got no rollout slot (rollout_gate.cpp)
inline constexpr std::array<std::string_view, 1> k_fault_skips = {"slot-wait"};

#ifdef SHIMKEEPER_FAULT_INJECTION
void fault_point(const char* step);
bool fault_skips(std::string_view rule);
#else
inline void fault_point(const char*) {}
inline bool fault_skips(std::string_view) {
    return false;
}
#endif

} // namespace shimkeeper::reconcile
