#include "shimkeeper/kubeapi/request_bound.hpp"

#include <algorithm>
#include <cstdint>
#include <systemd/sd-daemon.h>

namespace shimkeeper::kubeapi {

std::chrono::milliseconds request_time_bound(std::optional<std::chrono::microseconds> watchdog) {
    if (!watchdog || watchdog->count() <= 0) {
        return k_max_request_time;
    }
    const auto quarter = std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog / 4);
    return std::clamp(quarter, k_min_request_time, k_max_request_time);
}

std::chrono::milliseconds request_time_bound() {
    std::uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0) {
        return request_time_bound(std::chrono::microseconds(usec));
    }
    return request_time_bound(std::nullopt);
}

util::Expected<void> ApiPass::before_request() const {
    ping();
    if (m_wanted && !m_wanted()) {
        return util::fail(util::ErrorCode::network, "not asked: the pass was stopped");
    }
    if (m_no_answer) {
        return util::fail(util::ErrorCode::network,
                          "not asked: the API server did not answer an earlier request (" +
                              m_no_answer->message() + ")");
    }
    return {};
}

void ApiPass::note_no_answer(const util::Error& error) {
    if (!m_no_answer) {
        m_no_answer = error;
    }
}

} // namespace shimkeeper::kubeapi
