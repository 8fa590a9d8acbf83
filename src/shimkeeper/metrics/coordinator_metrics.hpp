// What `shimkeeper coordinate --listen` serves at /metrics: numbers the coordinator's loop
// published and the API client counted, rendered in the exposition format (exposition.hpp).
// Plain data: the caller (cli) copies them out of the coordinator and the client.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace shimkeeper::metrics {

struct Histogram {
    std::vector<std::pair<double, std::uint64_t>> at_most; // (le, cumulative count), +Inf left out
    std::uint64_t count = 0;
    double sum = 0;
};

struct CoordinatorMetrics {
    bool leader = false;
    std::uint64_t passes = 0;
    std::uint64_t grants = 0;
    std::uint64_t halts = 0;
    // shim -> state (selected, installed, failed, updating) -> nodes; the leader's alone.
    std::map<std::string, std::map<std::string, std::uint64_t>> shim_nodes;
    std::map<std::pair<std::string, std::string>, std::uint64_t> api_errors; // (verb, code)
    std::map<std::string, Histogram> api_latency;                            // by verb
};

std::string render_coordinator_metrics(const CoordinatorMetrics& metrics);

} // namespace shimkeeper::metrics
