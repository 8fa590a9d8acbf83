#include "shimkeeper/util/log.hpp"

#include "shimkeeper/util/log_sink.hpp"

namespace shimkeeper::util {

bool parse_log_level(std::string_view text, LogLevel& out) {
    if (text == "debug") {
        out = LogLevel::debug;
    } else if (text == "info") {
        out = LogLevel::info;
    } else if (text == "warning" || text == "warn") {
        out = LogLevel::warning;
    } else if (text == "error") {
        out = LogLevel::error;
    } else {
        return false;
    }
    return true;
}

LogFields LogFields::merged(const LogFields& more) const {
    LogFields out = *this;
    for (auto [mine, theirs] : {std::pair{&out.shim, &more.shim},
                                {&out.handler, &more.handler},
                                {&out.digest, &more.digest},
                                {&out.txn, &more.txn}}) {
        if (!theirs->empty()) {
            *mine = *theirs;
        }
    }
    return out;
}

Log::Log(LogLevel level) : m_level(level), m_sink(sink_for_stderr()) {}

Log Log::with(const LogFields& fields) const {
    Log scoped = *this;
    scoped.m_scope = m_scope.merged(fields);
    return scoped;
}

void Log::write(LogLevel level, std::string_view message, const LogFields& fields) const {
    if (!enabled(level) || !m_sink) {
        return;
    }
    m_sink->write(LogRecord{level, std::string(message), m_scope.merged(fields)});
}

} // namespace shimkeeper::util
