// What the coordinator's probes answer: liveness from the loop's progress mark, readiness from
// the reading the loop published; and the /metrics text made from both sources.
#include "shimkeeper/cli/coordinator_endpoints.hpp"

#include <gtest/gtest.h>

namespace {
namespace cli_coordinator_endpoints {

using namespace shimkeeper::cli;

TEST(CoordinatorEndpoints, HealthyWhileTheLoopMovesStalledAfterAMinute) {
    CoordinatorBoard board;
    const auto now = CoordinatorBoard::Clock::now();
    board.mark_progress(now);
    EXPECT_EQ(health_reply(board.since_progress(now + std::chrono::seconds(5))).status, 200);
    auto stalled =
        health_reply(board.since_progress(now + k_stalled_after + std::chrono::seconds(1)));
    EXPECT_EQ(stalled.status, 500);
    EXPECT_NE(stalled.body.find("no progress for 61 s"), std::string::npos) << stalled.body;
}

TEST(CoordinatorEndpoints, ReadyWhenTheCoordinatorSaysSoLeaderOrNot) {
    CoordinatorBoard board;
    EXPECT_EQ(ready_reply(board.reading()).status, 503) << "nothing published yet";
    CoordinatorReading standby;
    board.publish(standby);
    auto ready = ready_reply(board.reading());
    EXPECT_EQ(ready.status, 200);
    EXPECT_EQ(ready.body, "ok: standing by\n");
    CoordinatorReading syncing;
    syncing.leader = true;
    syncing.unready = "views not synced";
    auto not_ready = ready_reply(syncing);
    EXPECT_EQ(not_ready.status, 503);
    EXPECT_EQ(not_ready.body, "not ready: views not synced\n");
}

TEST(CoordinatorEndpoints, MetricsJoinTheReadingAndTheRequests) {
    CoordinatorReading reading;
    reading.leader = true;
    reading.grants = 3;
    reading.shim_nodes["demo"]["failed"] = 1;
    shimkeeper::kubeapi::RequestStats requests;
    requests.record("GET", 200, std::chrono::milliseconds(3));
    requests.record("POST", 0, std::chrono::seconds(20));
    const std::string text = metrics_text(reading, requests.tally());
    for (const char* line :
         {"shimkeeper_coordinator_leader 1\n", "shimkeeper_coordinator_grants_total 3\n",
          "shimkeeper_shim_nodes{shim=\"demo\",state=\"failed\"} 1\n",
          "shimkeeper_api_errors_total{verb=\"POST\",code=\"none\"} 1\n",
          "shimkeeper_api_request_duration_seconds_bucket{verb=\"GET\","
          "le=\"0.005\"} 1\n",
          "shimkeeper_api_request_duration_seconds_bucket{verb=\"POST\","
          "le=\"15\"} 0\n",
          "shimkeeper_api_request_duration_seconds_count{verb=\"POST\"} 1\n"}) {
        EXPECT_NE(text.find(line), std::string::npos) << line << text;
    }
    EXPECT_EQ(text.find("code=\"200\""), std::string::npos) << "a 200 is no error\n" << text;
}

} // namespace cli_coordinator_endpoints
} // namespace
