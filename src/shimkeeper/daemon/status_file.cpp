#include "shimkeeper/daemon/status_file.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/utc_time.hpp"

namespace shimkeeper::daemon {

const char* to_string(DaemonState state) {
    switch (state) {
    case DaemonState::starting:
        return "starting";
    case DaemonState::reconciling:
        return "reconciling";
    case DaemonState::converged:
        return "converged";
    case DaemonState::failing:
        return "failing";
    case DaemonState::stopping:
        return "stopping";
    }
    return "unknown";
}

namespace {

nlohmann::json optional_time(const std::optional<WallTime>& time) {
    return time ? nlohmann::json(util::rfc3339(*time)) : nlohmann::json(nullptr);
}

} // namespace

nlohmann::json to_json(const DaemonStatus& status) {
    return {
        {"daemon",
         {
             {"state", to_string(status.state)},
             {"status", status.status_line},
             {"pid", status.pid},
             {"started_at", util::rfc3339(status.started_at)},
             {"consecutive_failures", status.consecutive_failures},
             {"last_attempt", optional_time(status.last_attempt)},
             {"last_success", optional_time(status.last_success)},
             {"next_retry", optional_time(status.next_retry)},
             {"last_trigger", status.last_trigger},
             {"last_changed", status.last_changed},
         }},
        {"result", status.result},
    };
}

util::Expected<void> write_status_file(const std::filesystem::path& file,
                                       const DaemonStatus& status) {
    if (file.has_parent_path()) {
        TRY(util::create_directories(file.parent_path()));
    }
    std::string text = to_json(status).dump(2) + "\n";
    auto written = util::write_file_atomic(file, text, 0644);
    if (!written) {
        return std::unexpected(
            std::move(written).error().with_context("writing the daemon status " + file.string()));
    }
    return {};
}

} // namespace shimkeeper::daemon
