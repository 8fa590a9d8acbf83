#include "shimkeeper/metrics/coordinator_metrics.hpp"

#include "shimkeeper/metrics/exposition.hpp"

namespace shimkeeper::metrics {

std::string render_coordinator_metrics(const CoordinatorMetrics& m) {
    Exposition out;
    out.family("shimkeeper_coordinator_leader", "gauge",
               "1 while this coordinator holds the Lease and acts, 0 while it stands by.");
    out.sample("shimkeeper_coordinator_leader", std::uint64_t{m.leader ? 1U : 0U});
    out.family("shimkeeper_coordinator_passes_total", "counter",
               "Coordinator passes run to the end (finalizers, RuntimeClasses, status, slots).");
    out.sample("shimkeeper_coordinator_passes_total", m.passes);
    out.family("shimkeeper_coordinator_grants_total", "counter", "Rollout slots granted.");
    out.sample("shimkeeper_coordinator_grants_total", m.grants);
    out.family("shimkeeper_coordinator_halts_total", "counter",
               "Rollouts found halted by a node's failure (each with a RolloutHalted Event).");
    out.sample("shimkeeper_coordinator_halts_total", m.halts);

    out.family("shimkeeper_shim_nodes", "gauge",
               "Nodes of each Shim by state, as the leader's last pass counted them "
               "(the Shim's status.nodes).");
    for (const auto& [shim, states] : m.shim_nodes) {
        for (const auto& [state, nodes] : states) {
            out.sample("shimkeeper_shim_nodes", {{"shim", shim}, {"state", state}}, nodes);
        }
    }

    out.family("shimkeeper_api_errors_total", "counter",
               "API requests that failed, by verb (HTTP method) and code (\"none\": no answer).");
    for (const auto& [key, count] : m.api_errors) {
        out.sample("shimkeeper_api_errors_total", {{"verb", key.first}, {"code", key.second}},
                   count);
    }

    out.family("shimkeeper_api_request_duration_seconds", "histogram",
               "How long API requests took, by verb (HTTP method); watches not included.");
    for (const auto& [verb, histogram] : m.api_latency) {
        for (const auto& [le, count] : histogram.at_most) {
            out.sample("shimkeeper_api_request_duration_seconds_bucket",
                       {{"verb", verb}, {"le", format_number(le)}}, count);
        }
        out.sample("shimkeeper_api_request_duration_seconds_bucket",
                   {{"verb", verb}, {"le", "+Inf"}}, histogram.count);
        out.sample("shimkeeper_api_request_duration_seconds_sum", {{"verb", verb}}, histogram.sum);
        out.sample("shimkeeper_api_request_duration_seconds_count", {{"verb", verb}},
                   histogram.count);
    }
    return out.text();
}

} // namespace shimkeeper::metrics
