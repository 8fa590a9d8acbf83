#include "shimkeeper/util/log.hpp"

#include <cstdio>
#include <string>

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

void Log::write(LogLevel level, std::string_view message) const {
    if (!enabled(level)) {
        return;
    }
    const char* prefix = "";
    switch (level) {
    case LogLevel::debug:
        prefix = "debug: ";
        break;
    case LogLevel::info:
        prefix = "";
        break;
    case LogLevel::warning:
        prefix = "warning: ";
        break;
    case LogLevel::error:
        prefix = "error: ";
        break;
    }
    std::string line = std::string(prefix) + std::string(message) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace shimkeeper::util
