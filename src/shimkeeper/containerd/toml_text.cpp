#include "shimkeeper/containerd/toml_text.hpp"

#include "shimkeeper/util/toml_quote.hpp"

#include <algorithm>
#include <sstream>

namespace shimkeeper::containerd {

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            lines.emplace_back(text.substr(start));
            break;
        }
        lines.emplace_back(text.substr(start, end + 1 - start));
        start = end + 1;
    }
    return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines) {
        text += line;
    }
    return text;
}

std::string_view line_body(std::string_view line) {
    if (line.ends_with("\r\n")) {
        line.remove_suffix(2);
    } else if (line.ends_with('\n')) {
        line.remove_suffix(1);
    }
    return line;
}

std::string dominant_line_ending(const std::vector<std::string>& lines) {
    if (!lines.empty() && lines.front().ends_with("\r\n")) {
        return "\r\n";
    }
    return "\n";
}

std::vector<std::string> mask_lines(const std::vector<std::string>& lines, Masking masking) {
    if (masking == Masking::none) {
        return lines;
    }
    std::vector<std::string> masked;
    masked.reserve(lines.size());
    for (const auto& line : lines) {
        masked.push_back(line.find("{{") == std::string::npos ? line : "#" + line);
    }
    return masked;
}

namespace {

// Debian's toml++ 3.3 reaches a TOML_UNREACHABLE (undefined behaviour; an assert in debug builds)
// when it tests some non-ASCII characters for whitespace, which it does wherever a key or value
// may start (found by tests/fuzz). TOML allows non-ASCII only inside strings and comments, so a
// lexical pass refuses any other non-ASCII byte before toml++ sees the text. Inside multi-line
// basic strings, the whitespace skipped after a line-ending backslash must be followed by ASCII.
util::Expected<void> refuse_parser_traps(std::string_view text, const std::string& label) {
    enum class State { normal, comment, basic, literal, ml_basic, ml_literal };
    State state = State::normal;
    std::size_t line = 1;
    auto refuse = [&](std::string_view where) {
        return util::fail(util::ErrorCode::invalid_input,
                          label + ":" + std::to_string(line) + ": a non-ASCII character " +
                              std::string(where) +
                              "; TOML allows those only inside strings and comments");
    };
    if (text.starts_with("\xEF\xBB\xBF")) {
        text.remove_prefix(3); // a UTF-8 byte order mark
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        bool high = static_cast<unsigned char>(c) >= 0x80;
        if (c == '\n') {
            ++line;
        }
        auto triple = [&](char q) {
            return text.substr(i, 3) == std::string(3, q);
        };
        switch (state) {
        case State::normal:
            if (high) {
                return refuse("outside a string or comment");
            }
            if (c == '#') {
                state = State::comment;
            } else if (c == '"' || c == '\'') {
                bool multi = triple(c);
                state = c == '"' ? (multi ? State::ml_basic : State::basic)
                                 : (multi ? State::ml_literal : State::literal);
                i += multi ? 2 : 0;
            }
            break;
        case State::comment:
            state = c == '\n' ? State::normal : state;
            break;
        case State::basic:
            if (c == '\\') {
                ++i;
            } else if (c == '"' || c == '\n') {
                state = State::normal;
            }
            break;
        case State::literal:
            state = (c == '\'' || c == '\n') ? State::normal : state;
            break;
        case State::ml_literal:
            if (triple('\'')) {
                state = State::normal;
                i += 2;
            }
            break;
        case State::ml_basic:
            if (c == '\\') {
                std::size_t j = i + 1;
                while (j < text.size() &&
                       (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n')) {
                    line += text[j] == '\n' ? 1 : 0;
                    ++j;
                }
                if (j > i + 1 && j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80) {
                    return refuse("after a line-ending backslash");
                }
                i = j > i + 1 ? j - 1 : i + 1;
            } else if (triple('"')) {
                state = State::normal;
                i += 2;
            }
            break;
        }
    }
    return {};
}

} // namespace

util::Expected<toml::table> parse_toml(std::string_view text, const std::string& label) {
    TRY(refuse_parser_traps(text, label));
    // toml++ reports errors by exception; this is its edge, so convert here.
    try {
        return toml::parse(text, label);
    } catch (const toml::parse_error& e) {
        std::ostringstream msg;
        msg << label << ":" << e.source().begin.line << ":" << e.source().begin.column
            << ": invalid TOML: " << e.description() << "; fix the file (shimkeeper never "
            << "rewrites a file it cannot parse)";
        return util::fail(util::ErrorCode::invalid_input, msg.str());
    }
}

std::string render_path(const KeyPath& path) {
    std::string out;
    for (const auto& part : path) {
        if (!out.empty()) {
            out += '.';
        }
        out += util::toml_key(part);
    }
    return out;
}

bool starts_with(const KeyPath& path, const KeyPath& prefix) {
    return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

} // namespace shimkeeper::containerd
