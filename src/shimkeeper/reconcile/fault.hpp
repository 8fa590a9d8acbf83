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

// The deliberately broken behaviours (SHIMKEEPER_FAULT_SWITCH takes one, or several separated by
// commas):
//   handler-before-label: a cluster shim's removal keeps its label until after the handler went
//     (cluster_report.cpp skips the label-first report), the order uninstall must never take;
//   slot-wait: a rolling Shim changes on a node that got no rollout slot (rollout_gate.cpp);
//   label-patch-fails: the Node report before a change is never sent, as if the API server
//     refused it (cluster_report.cpp): the label cannot come off first;
//   label-before-serving: the report before a change labels a Shim with the handler it is about
//     to install, before containerd serves it (cluster_report.cpp);
//   grant-over-max: the coordinator grants one rollout slot more than maxUpdate
//     (coordinator_pass.cpp);
//   halt-ignored: the coordinator grants slots of a Shim whose rollout a failed slot halted
//     (coordinator_pass.cpp);
//   slot-reclaim-early: the coordinator frees a slot whose holder has not renewed it for half
//     the lease, not the whole of it (slot_reclaim_wait.hpp);
//   grant-slow: not a defect but a slow API server: each group of slot grants waits 300 ms
//     before its creates (coordinator_pass.cpp), so a test can make a failure come in mid-batch;
//   standby-lease-watch-behind: not a defect but a loaded API server: a coordinator candidate's
//     Lease watch delivers no slot change while it stands by (coordinator.cpp), so a test can
//     make a new leader's standby view stale;
//   term-keeps-slots: a new coordinator term grants from the slots its standby watch saw
//     instead of listing them anew (coordinator.cpp);
//   pass-stalls: not a defect but a hung request: the coordinator's first pass holds its loop
//     for 17 s, longer than the lease (coordinator.cpp);
//   shim-view-misses-status: not a defect but a view behind the API server: the coordinator's
//     Shim view learns of no status write, its own or the watch's (coordinator.cpp,
//     coordinator_pass.cpp), as a new term whose list came before the last term's write landed.
//   holds-unseen: not a defect but a Node watch far behind: the coordinator's view takes in no
//     node's slot entry from its watch (coordinator.cpp), only from the read before a revoked
//     slot is freed;
//   revoke-unchecked: the coordinator frees a revoked slot without reading its holder's Node
//     first, so a renewal its view missed does not withdraw the revoke (coordinator_pass.cpp);
//   claims-age: not a defect but a loaded node: every slot the daemon's watch took looks too
//     old for the next reconcile to use as it is (rollout_gate.cpp), as when that reconcile
//     starts long after the take;
//   report-after-fails: not a defect but a refused write: the Node report after a transaction
//     that would release rollout slots fails as if the API server refused it (cluster_report.cpp),
//     so the slots must be released by writes of their own (rollout_gate.cpp).
inline constexpr std::array<std::string_view, 16> k_fault_switches = {
    "handler-before-label", "slot-wait",        "label-patch-fails",
    "label-before-serving", "grant-over-max",   "halt-ignored",
    "slot-reclaim-early",   "grant-slow",       "standby-lease-watch-behind",
    "term-keeps-slots",     "pass-stalls",      "shim-view-misses-status",
    "holds-unseen",         "revoke-unchecked", "claims-age",
    "report-after-fails"};

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
