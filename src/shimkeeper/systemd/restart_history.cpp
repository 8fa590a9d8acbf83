#include "shimkeeper/systemd/restart_history.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace shimkeeper::systemd {

namespace {

using std::chrono::microseconds;

std::optional<RestartRecord> parse_line(std::string_view line) {
    const auto space = line.find(' ');
    if (space == std::string_view::npos || space == 0) {
        return std::nullopt;
    }
    const auto number = line.substr(space + 1);
    long long us = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), us);
    if (ec != std::errc() || end != number.data() + number.size() || us < 0) {
        return std::nullopt;
    }
    return RestartRecord{std::string(line.substr(0, space)), Clock::time_point(microseconds(us))};
}

} // namespace

util::Expected<RestartHistory> RestartHistory::load(const std::filesystem::path& file) {
    RestartHistory history(file);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return history;
    }
    const auto text = TRY(util::read_file(file));
    std::size_t line_no = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        ++line_no;
        const std::string_view line(text.data() + start, end - start);
        start = end + 1;
        if (line.empty()) {
            continue;
        }
        auto record = parse_line(line);
        if (!record) {
            return util::fail(util::ErrorCode::io,
                              file.string() + ":" + std::to_string(line_no) +
                                  ": not a restart record \"<unit> <microseconds>\"; delete the "
                                  "file to forget the restart history");
        }
        history.m_records.push_back(std::move(*record));
    }
    std::ranges::stable_sort(history.m_records, {}, &RestartRecord::when);
    return history;
}

std::vector<Clock::time_point> RestartHistory::of(const std::string& unit) const {
    std::vector<Clock::time_point> times;
    for (const auto& record : m_records) {
        if (record.unit == unit) {
            times.push_back(record.when);
        }
    }
    return times;
}

void RestartHistory::add(const std::string& unit, Clock::time_point when) {
    m_records.push_back({unit, when});
    std::ranges::stable_sort(m_records, {}, &RestartRecord::when);
}

void RestartHistory::forget_all_but_latest(const std::string& unit) {
    const auto times = of(unit);
    if (times.empty()) {
        return;
    }
    const auto latest = times.back();
    std::erase_if(m_records,
                  [&](const RestartRecord& r) { return r.unit == unit && r.when != latest; });
}

void RestartHistory::prune(Clock::time_point horizon) {
    std::erase_if(m_records, [&](const RestartRecord& r) { return r.when < horizon; });
}

util::Expected<void> RestartHistory::save() const {
    std::string text;
    for (const auto& record : m_records) {
        const auto us =
            std::chrono::duration_cast<microseconds>(record.when.time_since_epoch()).count();
        text += record.unit + " " + std::to_string(us) + "\n";
    }
    TRY(util::create_directories(m_file.parent_path()));
    return util::write_file_atomic(m_file, text, 0644);
}

} // namespace shimkeeper::systemd
