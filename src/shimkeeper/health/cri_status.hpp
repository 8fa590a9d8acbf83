// What the CRI Status call tells about the running containerd: its conditions and the runtime
// handlers its effective CRI config registers, with the binary each one points at.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::health {

struct RuntimeHandlerInfo {
    std::string name;         // the handler, = RuntimeClass.handler
    std::string runtime_type; // "io.containerd.runc.v2" or an absolute shim path
    std::string runtime_path; // honoured from containerd 1.7 on; empty when unset

    bool operator==(const RuntimeHandlerInfo&) const = default;
};

struct CriStatus {
    bool runtime_ready = false;
    bool network_ready = false;               // false without CNI: not a health failure
    std::map<std::string, bool> conditions;   // condition type -> status
    std::vector<RuntimeHandlerInfo> handlers; // sorted by name
    std::string raw_config_json;              // info["config"], for status output
};

// Decodes a serialized runtime.v1.StatusResponse (asked with verbose=true).
util::Expected<CriStatus> parse_cri_status(std::string_view serialized_response);

// The runtimes of info["config"]: containerd 1.6/1.7/2.x write the effective CRI config as JSON
// with the handlers at containerd.runtimes.<name>, each with runtimeType and runtimePath.
util::Expected<std::vector<RuntimeHandlerInfo>> parse_cri_config_runtimes(std::string_view json);

} // namespace shimkeeper::health
