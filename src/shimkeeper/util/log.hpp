// Logging for the CLI and the daemon. A Log is created once per process by the command layer and
// passed down. Each record carries, besides its text, the fields of what it concerns (shim,
// handler, digest, transaction), so that under systemd `journalctl -u shimkeeper SHIM=demo`
// finds a shim's lines. Where records go is the sink (log_sink.hpp): readable lines on stderr,
// or the journal's native protocol when stderr is the journal.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace shimkeeper::util {

enum class LogLevel { debug, info, warning, error };

// "debug" | "info" | "warning" (or "warn") | "error"; false on anything else.
bool parse_log_level(std::string_view text, LogLevel& out);

// What a record is about; empty members are left out. Given per call, or fixed for a scope with
// Log::with (a transaction's TXN, a shim being staged).
struct LogFields {
    std::string shim = {};
    std::string handler = {};
    std::string digest = {}; // "sha256:<hex>"
    std::string txn = {};

    // `more` wins where both have a value.
    LogFields merged(const LogFields& more) const;
};

struct LogRecord {
    LogLevel level = LogLevel::info;
    std::string message;
    LogFields fields;
};

class LogSink {
public:
    virtual ~LogSink() = default;
    virtual void write(const LogRecord& record) = 0;
};

class Log {
public:
    // Writes to the sink chosen for this process's stderr (log_sink.hpp).
    explicit Log(LogLevel level = LogLevel::info);
    Log(LogLevel level, std::shared_ptr<LogSink> sink) : m_level(level), m_sink(std::move(sink)) {}

    void debug(std::string_view message, const LogFields& fields = {}) const {
        write(LogLevel::debug, message, fields);
    }
    void info(std::string_view message, const LogFields& fields = {}) const {
        write(LogLevel::info, message, fields);
    }
    void warning(std::string_view message, const LogFields& fields = {}) const {
        write(LogLevel::warning, message, fields);
    }
    void error(std::string_view message, const LogFields& fields = {}) const {
        write(LogLevel::error, message, fields);
    }

    // The same log, every record of which also carries `fields` (a scope: one transaction).
    Log with(const LogFields& fields) const;

    bool enabled(LogLevel level) const { return level >= m_level; }
    LogLevel level() const { return m_level; }

private:
    void write(LogLevel level, std::string_view message, const LogFields& fields) const;

    LogLevel m_level;
    std::shared_ptr<LogSink> m_sink;
    LogFields m_scope;
};

} // namespace shimkeeper::util
