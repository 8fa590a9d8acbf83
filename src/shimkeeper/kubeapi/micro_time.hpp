// Kubernetes' MicroTime text (RFC 3339 in UTC with microseconds: 2026-11-23T18:26:28.123456Z),
// used by Lease renewTime/acquireTime and Event eventTime.
#pragma once

#include <chrono>
#include <string>

namespace shimkeeper::kubeapi {

std::string micro_time(std::chrono::system_clock::time_point when);

} // namespace shimkeeper::kubeapi
