// What "containerd is healthy after a change" means, as a pure function of one observation:
// Version answers, CRI Status answers with RuntimeReady, every desired handler is registered
// and points at the expected binary, every handler that must stay is still there, and no
// condition that was true before the change is false now.
#pragma once

#include "shimkeeper/health/cri_status.hpp"
#include "shimkeeper/util/error.hpp"

#include <map>
#include <string>
#include <vector>

namespace shimkeeper::health {

struct HealthExpectation {
    // handler -> the binary it must run (absolute node path). Compared with runtime_type when
    // that is an absolute path (what shimkeeper writes on containerd 1.6), else runtime_path.
    std::map<std::string, std::string> handlers;
    // Handlers that were registered before and must still be (e.g. "runc").
    std::vector<std::string> must_keep;
    // The conditions CRI reported before the change; a true one must not turn false.
    std::map<std::string, bool> conditions_before;
};

struct HealthReport {
    bool healthy = false;
    std::string reason; // healthy: a one-line summary; else the first thing that is wrong
};

// The binary a handler really runs: runtime_type when it is an absolute path, else runtime_path
// (empty: containerd resolves containerd-shim-<x>-<v> through its PATH).
std::string effective_binary(const RuntimeHandlerInfo& handler);

HealthReport evaluate(const HealthExpectation& expectation,
                      const util::Expected<std::string>& version,
                      const util::Expected<CriStatus>& status);

} // namespace shimkeeper::health
