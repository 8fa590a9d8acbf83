// Where log records go. systemd connects a service's stderr to the journal and says so in
// JOURNAL_STREAM ("<device>:<inode>" of that stream); only when fd 2 is still exactly that
// stream (not redirected by a wrapper or a test) are records sent with sd_journal_send, so that
// their fields (SHIM=, TXN=, ...) become journal fields. Anywhere else: readable lines, as a
// person at a terminal or a log file expects.
#pragma once

#include "shimkeeper/util/log.hpp"

#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace shimkeeper::util {

enum class LogTarget { lines, journal };

// The decision, pure: `journal_stream` is the environment value (nullptr when unset),
// `stderr_stat` what fstat(2) says of fd 2 (nullptr when it failed).
LogTarget log_target_for(const char* journal_stream, const struct stat* stderr_stat);

// syslog(3) priority of a level: error 3, warning 4, info 6, debug 7.
int syslog_priority(LogLevel level);

// The journal fields of a record, "NAME=value" each: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER and
// the record's non-empty SHIM, HANDLER, DIGEST, TXN.
std::vector<std::string> journal_fields(const LogRecord& record);

// The readable line (with its newline) written to stderr: "warning: text", "error: text", ...
std::string readable_line(const LogRecord& record);

// Writes readable lines to stderr.
class LineSink final : public LogSink {
public:
    void write(const LogRecord& record) override;
};

// Sends each record to the journal; a record the journal refuses is written as a line instead
// (it still reaches the journal through stderr, without its fields).
class JournalSink final : public LogSink {
public:
    void write(const LogRecord& record) override;
};

// The sink for this process: JournalSink when stderr is the journal, LineSink otherwise.
std::shared_ptr<LogSink> sink_for_stderr();

} // namespace shimkeeper::util
