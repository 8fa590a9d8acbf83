// Crash points for recovery tests. Compiled in only with -DSHIMKEEPER_FAULT_INJECTION=ON:
// SHIMKEEPER_FAULT=<step> makes the process SIGKILL itself when it reaches that step;
// SHIMKEEPER_FAULT_RUN=<step>:<command> runs a shell command there (another writer's edit);
// SHIMKEEPER_FAULT_SWITCH=<switch> turns on one deliberately broken behaviour, so that a test of
// the tests can prove a check fails when the promise it checks is broken.
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

// The deliberately broken behaviours:
//   handler-before-label: a cluster shim's removal keeps its label until after the handler went
//     (cluster_report.cpp skips the label-first report), the order uninstall must never take;
//   slot-wait: a rolling Shim changes on a node that got no rollout slot (rollout_gate.cpp).
inline constexpr std::array<std::string_view, 2> k_fault_switches = {"handler-before-label",
                                                                     "slot-wait"};

#ifdef SHIMKEEPER_FAULT_INJECTION
void fault_point(const char* step);
bool fault_switch(std::string_view name);
#else
inline void fault_point(const char*) {}
inline bool fault_switch(std::string_view) {
    return false;
}
#endif

} // namespace shimkeeper::reconcile
