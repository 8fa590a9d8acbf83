#include "shimkeeper/systemd/manager.hpp"

#include <array>
#include <utility>

namespace shimkeeper::systemd {

namespace {

constexpr std::array<std::pair<JobResult, std::string_view>, 6> k_names{{
    {JobResult::done, "done"},
    {JobResult::canceled, "canceled"},
    {JobResult::timeout, "timeout"},
    {JobResult::failed, "failed"},
    {JobResult::dependency, "dependency"},
    {JobResult::skipped, "skipped"},
}};

} // namespace

const char* to_string(JobResult result) {
    for (const auto& [value, name] : k_names) {
        if (value == result) {
            return name.data();
        }
    }
    return "unknown";
}

std::optional<JobResult> parse_job_result(std::string_view text) {
    for (const auto& [value, name] : k_names) {
        if (name == text) {
            return value;
        }
    }
    // systemd also knows "invalid" and "once" (jobs we never enqueue): a failure to us.
    if (text == "invalid" || text == "once") {
        return JobResult::failed;
    }
    return std::nullopt;
}

} // namespace shimkeeper::systemd
