#include "shimkeeper/kubeapi/request_stats.hpp"

namespace shimkeeper::kubeapi {

void RequestStats::record(const char* verb, long http_code, std::chrono::duration<double> took) {
    std::lock_guard lock(m_mutex);
    if (http_code == 0 || http_code >= 400) {
        ++m_tally.errors[{verb, http_code == 0 ? "none" : std::to_string(http_code)}];
    }
    LatencyHistogram& histogram = m_tally.latency[verb];
    for (std::size_t i = 0; i < k_request_seconds_buckets.size(); ++i) {
        if (took.count() <= k_request_seconds_buckets[i]) {
            ++histogram.at_most[i];
        }
    }
    ++histogram.count;
    histogram.sum_seconds += took.count();
}

RequestTally RequestStats::tally() const {
    std::lock_guard lock(m_mutex);
    return m_tally;
}

} // namespace shimkeeper::kubeapi
