// Logging for the CLI and the daemon. A Log is created once per process by the command layer and
// passed down; it writes readable lines to stderr (the daemon adds journald fields later).
#pragma once

#include <string>
#include <string_view>

namespace shimkeeper::util {

enum class LogLevel { debug, info, warning, error };

// "debug" | "info" | "warning" (or "warn") | "error"; nullopt-like false on anything else.
bool parse_log_level(std::string_view text, LogLevel& out);

class Log {
public:
    explicit Log(LogLevel level = LogLevel::info) : m_level(level) {}

    void debug(std::string_view message) const { write(LogLevel::debug, message); }
    void info(std::string_view message) const { write(LogLevel::info, message); }
    void warning(std::string_view message) const { write(LogLevel::warning, message); }
    void error(std::string_view message) const { write(LogLevel::error, message); }

    bool enabled(LogLevel level) const { return level >= m_level; }
    LogLevel level() const { return m_level; }

private:
    void write(LogLevel level, std::string_view message) const;

    LogLevel m_level;
};

} // namespace shimkeeper::util
