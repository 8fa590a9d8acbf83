// When shimkeeper last restarted each unit, kept in a small text file so that separate runs
// (apply, then rollback, then the daemon) together respect the unit's start limit.
// Format, one restart per line: "<unit> <microseconds since the epoch>". Written atomically.
#pragma once

#include "shimkeeper/systemd/clock.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace shimkeeper::systemd {

struct RestartRecord {
    std::string unit;
    Clock::time_point when;
};

class RestartHistory {
public:
    // A missing file is an empty history; a malformed line is an error naming the file and line.
    static util::Expected<RestartHistory> load(const std::filesystem::path& file);

    // Restarts of `unit`, oldest first.
    std::vector<Clock::time_point> of(const std::string& unit) const;

    void add(const std::string& unit, Clock::time_point when);
    // Forgets every restart of `unit` but the latest (after systemd's start limit was reset).
    void forget_all_but_latest(const std::string& unit);
    // Drops records older than `horizon`, keeping the file small.
    void prune(Clock::time_point horizon);

    util::Expected<void> save() const;

private:
    explicit RestartHistory(std::filesystem::path file) : m_file(std::move(file)) {}

    std::filesystem::path m_file;
    std::vector<RestartRecord> m_records;
};

} // namespace shimkeeper::systemd
