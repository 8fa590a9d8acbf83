// The metrics' counters across processes (a file in the state folder) and the textfile they are
// rendered into; the real node_exporter reads it in tests/integration/metrics_textfile.sh.
#include "shimkeeper/metrics/counters.hpp"
#include "shimkeeper/metrics/textfile.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::metrics {
namespace {
namespace metrics_textfile {

class MetricsFiles : public testing::TempDirTest {};

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(MetricsCount, EachTransactionCountsItsResultRollbackAndRestarts) {
    Counters counters;
    count(counters, {"committed", false, 1, 100.5, 0.25});
    count(counters, {"rolled-back", true, 2, 200.0, 1.5});
    count(counters, {"failed", false, 0, 300.0, 0.125});
    EXPECT_EQ(counters.transactions["committed"], 1u);
    EXPECT_EQ(counters.transactions["rolled-back"], 1u);
    EXPECT_EQ(counters.transactions["failed"], 1u);
    EXPECT_EQ(counters.rollbacks, 1u);
    EXPECT_EQ(counters.containerd_restarts, 3u);
    ASSERT_TRUE(counters.last);
    EXPECT_EQ(counters.last->result, "failed");
    EXPECT_EQ(counters.last->finished_unix, 300.0);
    EXPECT_EQ(counters.last->duration_seconds, 0.125);
}

TEST_F(MetricsFiles, CountersSurviveASaveAndLoad) {
    Counters counters;
    count(counters, {"committed", false, 1, 1795502427.860891, 0.75});
    count(counters, {"rolled-back", true, 2, 1795502428.5, 1.5});
    ASSERT_TRUE(save_counters(m_dir / "metrics.json", counters));
    auto loaded = load_counters(m_dir / "metrics.json");
    ASSERT_TRUE(loaded) << loaded.error().message();
    EXPECT_EQ(loaded->transactions, counters.transactions);
    EXPECT_EQ(loaded->rollbacks, 1u);
    EXPECT_EQ(loaded->containerd_restarts, 3u);
    ASSERT_TRUE(loaded->last);
    EXPECT_EQ(loaded->last->finished_unix, 1795502428.5);
    EXPECT_EQ(loaded->last->result, "rolled-back");
}

TEST_F(MetricsFiles, AMissingCountersFileIsZero) {
    auto loaded = load_counters(m_dir / "metrics.json");
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(loaded->transactions.empty());
    EXPECT_FALSE(loaded->last);
}

TEST_F(MetricsFiles, ADamagedCountersFileIsNamedWithWhatToDo) {
    ASSERT_TRUE(util::write_file_atomic(m_dir / "metrics.json",
                                        R"({"transactions": {"committed": -1}, "rollbacks": 0,
                                            "containerd_restarts": 0})"));
    auto loaded = load_counters(m_dir / "metrics.json");
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message().find((m_dir / "metrics.json").string()), std::string::npos);
    EXPECT_NE(loaded.error().message().find("committed"), std::string::npos)
        << loaded.error().message();
    EXPECT_NE(loaded.error().message().find("delete it"), std::string::npos);
}

TEST(MetricsRender, EveryResultIsPresentAndTypesAreDeclared) {
    NodeMetrics node;
    node.shims_installed = 2;
    node.store_bytes = 4096;
    count(node.counters, {"committed", false, 1, 1700000000.5, 0.25});
    const std::string text = render_textfile(node);
    EXPECT_TRUE(has_line(text, "shimkeeper_shims_installed 2")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_transactions_total{result=\"committed\"} 1")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_transactions_total{result=\"rolled-back\"} 0")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_transactions_total{result=\"failed\"} 0")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_containerd_restarts_total 1")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_last_transaction_timestamp_seconds 1700000000.5"))
        << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_last_transaction_duration_seconds 0.25")) << text;
    EXPECT_TRUE(has_line(text, "shimkeeper_store_bytes 4096")) << text;
    EXPECT_TRUE(has_line(text, "# TYPE shimkeeper_rollbacks_total counter")) << text;
    EXPECT_EQ(text.find("cluster"), std::string::npos) << "no cluster metric outside cluster mode";
}

TEST(MetricsRender, ClusterConnectionOnlyInClusterMode) {
    NodeMetrics node;
    node.cluster_connected = false;
    EXPECT_TRUE(has_line(render_textfile(node), "shimkeeper_cluster_connected 0"));
    node.cluster_connected = true;
    EXPECT_TRUE(has_line(render_textfile(node), "shimkeeper_cluster_connected 1"));
}

TEST(MetricsRender, NoTransactionYetMeansNoLastTransactionSamples) {
    const std::string text = render_textfile(NodeMetrics{});
    EXPECT_EQ(text.find("shimkeeper_last_transaction"), std::string::npos) << text;
}

TEST_F(MetricsFiles, SameContentIsNotWrittenAgain) {
    ASSERT_EQ(write_textfile(m_dir, "a 1\n").value(), Written::yes);
    const auto stamp = std::filesystem::last_write_time(m_dir / k_textfile_name);
    EXPECT_EQ(write_textfile(m_dir, "a 1\n").value(), Written::unchanged);
    EXPECT_EQ(std::filesystem::last_write_time(m_dir / k_textfile_name), stamp);
    ASSERT_EQ(write_textfile(m_dir, "a 2\n").value(), Written::yes);
    EXPECT_EQ(util::read_file(m_dir / k_textfile_name).value(), "a 2\n");
    for (const auto& entry : std::filesystem::directory_iterator(m_dir)) {
        EXPECT_EQ(entry.path().filename(), k_textfile_name) << "a temp file was left behind";
    }
}

TEST_F(MetricsFiles, RemovingTakesOnlyOurFileAndAbsenceIsFine) {
    ASSERT_EQ(write_textfile(m_dir, "a 1\n").value(), Written::yes);
    ASSERT_TRUE(util::write_file_atomic(m_dir / "node.prom", "b 1\n", 0644));
    ASSERT_TRUE(remove_textfile(m_dir));
    EXPECT_FALSE(std::filesystem::exists(m_dir / k_textfile_name));
    EXPECT_EQ(util::read_file(m_dir / "node.prom").value(), "b 1\n");
    EXPECT_TRUE(remove_textfile(m_dir));
    EXPECT_TRUE(remove_textfile(m_dir / "missing"));
}

} // namespace metrics_textfile
} // namespace
} // namespace shimkeeper::metrics
