// `shimkeeper coordinate --listen`: what its endpoints serve, from numbers the coordinator's loop
// publishes here (the loop thread writes, the HTTP threads read: a mutex for the reading, an
// atomic for the progress mark) and the API client's request counts (kubeapi/request_stats.hpp).
//   /healthz  200 while the loop makes progress (it turned, or a pass asked its next request,
//             within k_stalled_after); 500 naming how long it has been stuck otherwise;
//   /readyz   200 once the API server answered and, leading, the views are synced (a standby
//             candidate is ready: two replicas, one leads); 503 with the reason otherwise;
//   /metrics  metrics/coordinator_metrics.hpp.
#pragma once

#include "shimkeeper/cluster/coordinator/coordinator.hpp"
#include "shimkeeper/httpserve/endpoint_server.hpp"
#include "shimkeeper/kubeapi/request_stats.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace shimkeeper::cli {

// Longer than any one blocking request may hold the loop (kubeapi::k_max_request_time, and a
// pass pings before each request) with room to spare: a liveness failure restarts the Pod.
inline constexpr std::chrono::seconds k_stalled_after{60};

struct CoordinatorReading {
    bool leader = false;
    std::uint64_t passes = 0;
    std::uint64_t grants = 0;
    std::uint64_t halts = 0;
    std::map<std::string, std::map<std::string, std::uint64_t>> shim_nodes; // shim, state
    std::string unready;                                                    // empty: ready
};

CoordinatorReading reading_of(const cluster::coordinator::Coordinator& coordinator);

class CoordinatorBoard {
public:
    using Clock = std::chrono::steady_clock;

    CoordinatorBoard() { mark_progress(); }
    void publish(CoordinatorReading reading);
    void mark_progress(Clock::time_point now = Clock::now());

    CoordinatorReading reading() const;
    Clock::duration since_progress(Clock::time_point now = Clock::now()) const;

private:
    mutable std::mutex m_mutex;
    CoordinatorReading m_reading = not_started();
    static CoordinatorReading not_started() {
        CoordinatorReading reading;
        reading.unready = "the coordinator has not started yet";
        return reading;
    }
    std::atomic<Clock::rep> m_progress{0};
};

httpserve::Reply health_reply(CoordinatorBoard::Clock::duration since_progress);
httpserve::Reply ready_reply(const CoordinatorReading& reading);
std::string metrics_text(const CoordinatorReading& reading, const kubeapi::RequestTally& requests);

// The three routes over `board` and `requests`, which must outlive the server.
httpserve::Routes coordinator_routes(const CoordinatorBoard& board,
                                     const kubeapi::RequestStats& requests);

} // namespace shimkeeper::cli
