// Crash points for recovery tests. Compiled in only with -DSHIMKEEPER_FAULT_INJECTION=ON:
// SHIMKEEPER_FAULT=<step> makes the process SIGKILL itself when it reaches that step.
#pragma once

namespace shimkeeper::reconcile {

#ifdef SHIMKEEPER_FAULT_INJECTION
void fault_point(const char* step);
#else
inline void fault_point(const char*) {}
#endif

} // namespace shimkeeper::reconcile
