#include "shimkeeper/cli/coordinator_endpoints.hpp"

#include "shimkeeper/metrics/coordinator_metrics.hpp"
#include "shimkeeper/metrics/exposition.hpp"

#include <algorithm>

namespace shimkeeper::cli {

CoordinatorReading reading_of(const cluster::coordinator::Coordinator& coordinator) {
    const cluster::coordinator::CoordinatorStats& stats = coordinator.stats();
    CoordinatorReading reading;
    reading.leader = coordinator.leading();
    reading.passes = stats.passes;
    reading.grants = stats.grants;
    reading.halts = stats.halts;
    const auto count = [](int nodes) {
        return static_cast<std::uint64_t>(std::max(nodes, 0));
    };
    for (const auto& [shim, counts] : stats.shim_nodes) {
        reading.shim_nodes[shim] = {{"selected", count(counts.selected)},
                                    {"installed", count(counts.installed)},
                                    {"failed", count(counts.failed)},
                                    {"updating", count(counts.updating)}};
    }
    reading.unready = coordinator.unready_reason();
    return reading;
}

void CoordinatorBoard::publish(CoordinatorReading reading) {
    std::lock_guard lock(m_mutex);
    m_reading = std::move(reading);
}

void CoordinatorBoard::mark_progress(Clock::time_point now) {
    m_progress.store(now.time_since_epoch().count());
}

CoordinatorReading CoordinatorBoard::reading() const {
    std::lock_guard lock(m_mutex);
    return m_reading;
}

CoordinatorBoard::Clock::duration CoordinatorBoard::since_progress(Clock::time_point now) const {
    return now - Clock::time_point(Clock::duration(m_progress.load()));
}

httpserve::Reply health_reply(CoordinatorBoard::Clock::duration since_progress) {
    if (since_progress > k_stalled_after) {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_progress);
        return {500, "stalled: the coordinator's loop has made no progress for " +
                         std::to_string(seconds.count()) + " s (a request or pass stuck)\n"};
    }
    return {200, "ok\n"};
}

httpserve::Reply ready_reply(const CoordinatorReading& reading) {
    if (!reading.unready.empty()) {
        return {503, "not ready: " + reading.unready + "\n"};
    }
    return {200, reading.leader ? "ok: leading\n" : "ok: standing by\n"};
}

std::string metrics_text(const CoordinatorReading& reading, const kubeapi::RequestTally& requests) {
    metrics::CoordinatorMetrics m;
    m.leader = reading.leader;
    m.passes = reading.passes;
    m.grants = reading.grants;
    m.halts = reading.halts;
    m.shim_nodes = reading.shim_nodes;
    m.api_errors = requests.errors;
    for (const auto& [verb, histogram] : requests.latency) {
        metrics::Histogram& out = m.api_latency[verb];
        for (std::size_t i = 0; i < kubeapi::k_request_seconds_buckets.size(); ++i) {
            out.at_most.emplace_back(kubeapi::k_request_seconds_buckets[i], histogram.at_most[i]);
        }
        out.count = histogram.count;
        out.sum = histogram.sum_seconds;
    }
    return metrics::render_coordinator_metrics(m);
}

httpserve::Routes coordinator_routes(const CoordinatorBoard& board,
                                     const kubeapi::RequestStats& requests) {
    httpserve::Routes routes;
    routes["/healthz"] = [&board] {
        return health_reply(board.since_progress());
    };
    routes["/readyz"] = [&board] {
        return ready_reply(board.reading());
    };
    routes["/metrics"] = [&board, &requests] {
        return httpserve::Reply{200, metrics_text(board.reading(), requests.tally()),
                                metrics::k_exposition_content_type};
    };
    return routes;
}

} // namespace shimkeeper::cli
