#include "shimkeeper/util/log_sink.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

namespace shimkeeper::util {

namespace {

constexpr const char* k_identifier = "shimkeeper";

bool parse_number(std::string_view text, unsigned long long& out) {
    if (text.empty()) {
        return false;
    }
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

} // namespace

LogTarget log_target_for(const char* journal_stream, const struct stat* stderr_stat) {
    if (journal_stream == nullptr || stderr_stat == nullptr) {
        return LogTarget::lines;
    }
    // systemd writes st_dev and st_ino as two decimal numbers (sd_journal_stream_fd(3)).
    const std::string_view value(journal_stream);
    const auto colon = value.find(':');
    unsigned long long device = 0;
    unsigned long long inode = 0;
    if (colon == std::string_view::npos || !parse_number(value.substr(0, colon), device) ||
        !parse_number(value.substr(colon + 1), inode)) {
        return LogTarget::lines;
    }
    const bool same = device == static_cast<unsigned long long>(stderr_stat->st_dev) &&
                      inode == static_cast<unsigned long long>(stderr_stat->st_ino);
    return same ? LogTarget::journal : LogTarget::lines;
}

int syslog_priority(LogLevel level) {
    switch (level) {
    case LogLevel::debug:
        return 7;
    case LogLevel::info:
        return 6;
    case LogLevel::warning:
        return 4;
    case LogLevel::error:
        return 3;
    }
    return 6;
}

std::vector<std::string> journal_fields(const LogRecord& record) {
    std::vector<std::string> fields{"MESSAGE=" + record.message,
                                    "PRIORITY=" + std::to_string(syslog_priority(record.level)),
                                    "SYSLOG_IDENTIFIER=" + std::string(k_identifier)};
    for (const auto& [name, value] : {std::pair{"SHIM=", &record.fields.shim},
                                      {"HANDLER=", &record.fields.handler},
                                      {"DIGEST=", &record.fields.digest},
                                      {"TXN=", &record.fields.txn}}) {
        if (!value->empty()) {
            fields.push_back(name + *value);
        }
    }
    return fields;
}

std::string readable_line(const LogRecord& record) {
    const char* prefix = "";
    switch (record.level) {
    case LogLevel::debug:
        prefix = "debug: ";
        break;
    case LogLevel::info:
        break;
    case LogLevel::warning:
        prefix = "warning: ";
        break;
    case LogLevel::error:
        prefix = "error: ";
        break;
    }
    return prefix + record.message + "\n";
}

void LineSink::write(const LogRecord& record) {
    const std::string line = readable_line(record);
    std::fwrite(line.data(), 1, line.size(), stderr);
}

void JournalSink::write(const LogRecord& record) {
    // The native protocol takes binary-safe fields, so a message with newlines stays one record.
    const auto fields = journal_fields(record);
    std::vector<struct iovec> vector;
    vector.reserve(fields.size());
    for (const auto& field : fields) {
        vector.push_back({const_cast<char*>(field.data()), field.size()});
    }
    if (sd_journal_sendv(vector.data(), static_cast<int>(vector.size())) < 0) {
        LineSink().write(record);
    }
}

std::shared_ptr<LogSink> sink_for_stderr() {
    struct stat stderr_stat {};
    const bool known = ::fstat(2, &stderr_stat) == 0;
    if (log_target_for(std::getenv("JOURNAL_STREAM"), known ? &stderr_stat : nullptr) ==
        LogTarget::journal) {
        return std::make_shared<JournalSink>();
    }
    return std::make_shared<LineSink>();
}

} // namespace shimkeeper::util
