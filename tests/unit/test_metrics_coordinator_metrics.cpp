// The coordinator's /metrics text: every family with HELP and TYPE, label values escaped, the
// histogram's buckets cumulative and closed by +Inf; and the shared exposition writer's rules.
#include "shimkeeper/metrics/coordinator_metrics.hpp"
#include "shimkeeper/metrics/exposition.hpp"

#include <gtest/gtest.h>
#include <sstream>

namespace {
namespace metrics_coordinator_metrics {

using namespace shimkeeper::metrics;

bool has_line(const std::string& text, const std::string& line) {
    std::istringstream in(text);
    for (std::string got; std::getline(in, got);) {
        if (got == line) {
            return true;
        }
    }
    return false;
}

TEST(Exposition, EscapesLabelValuesAndHelp) {
    EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    EXPECT_EQ(escape_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");
    Exposition out;
    out.family("x_total", "counter", "what\nit counts");
    out.sample("x_total", {{"shim", "we\"ird"}, {"state", "ok"}}, std::uint64_t{3});
    EXPECT_EQ(out.text(), "# HELP x_total what\\nit counts\n# TYPE x_total counter\n"
                          "x_total{shim=\"we\\\"ird\",state=\"ok\"} 3\n");
}

TEST(Exposition, NumbersAreTheShortestThatReadBack) {
    EXPECT_EQ(format_number(0.005), "0.005");
    EXPECT_EQ(format_number(1700000000.5), "1700000000.5");
    EXPECT_EQ(format_number(15), "15");
    EXPECT_EQ(format_number(1.0 / 0.0), "+Inf");
}

TEST(CoordinatorMetrics, ALeaderWithGrantsNodesAndRequests) {
    CoordinatorMetrics m;
    m.leader = true;
    m.passes = 7;
    m.grants = 2;
    m.halts = 1;
    m.shim_nodes["demo"] = {{"installed", 1}, {"selected", 2}};
    m.api_errors[{"POST", "409"}] = 4;
    m.api_latency["GET"] = Histogram{{{0.005, 1}, {0.01, 3}}, 4, 0.5};
    const std::string text = render_coordinator_metrics(m);
    for (const char* line :
         {"# TYPE shimkeeper_coordinator_leader gauge", "shimkeeper_coordinator_leader 1",
          "# TYPE shimkeeper_coordinator_passes_total counter",
          "shimkeeper_coordinator_passes_total 7", "shimkeeper_coordinator_grants_total 2",
          "shimkeeper_coordinator_halts_total 1", "# TYPE shimkeeper_shim_nodes gauge",
          "shimkeeper_shim_nodes{shim=\"demo\",state=\"installed\"} 1",
          "shimkeeper_shim_nodes{shim=\"demo\",state=\"selected\"} 2",
          "shimkeeper_api_errors_total{verb=\"POST\",code=\"409\"} 4",
          "# TYPE shimkeeper_api_request_duration_seconds histogram",
          "shimkeeper_api_request_duration_seconds_bucket{verb=\"GET\",le=\"0.005\"} 1",
          "shimkeeper_api_request_duration_seconds_bucket{verb=\"GET\",le=\"0.01\"} 3",
          "shimkeeper_api_request_duration_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 4",
          "shimkeeper_api_request_duration_seconds_sum{verb=\"GET\"} 0.5",
          "shimkeeper_api_request_duration_seconds_count{verb=\"GET\"} 4"}) {
        EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
    }
}

TEST(CoordinatorMetrics, AStandbyHasTheFamiliesAndNoNodes) {
    const std::string text = render_coordinator_metrics({});
    EXPECT_TRUE(has_line(text, "shimkeeper_coordinator_leader 0")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_coordinator_grants_total 0")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE shimkeeper_shim_nodes gauge")) << text;
    EXPECT_EQ(text.find("shimkeeper_shim_nodes{"), std::string::npos) << text;
}

} // namespace metrics_coordinator_metrics
} // namespace
