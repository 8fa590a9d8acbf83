// The statement scanner of toml_text.hpp: finds where headers and key/values start and end.
#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/util/toml_quote.hpp"

#include <charconv>

namespace shimkeeper::containerd {

namespace {

void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// A cursor over the whole text that knows its line number.
class Scanner {
public:
    Scanner(std::string_view text, const std::string& label) : m_text(text), m_label(label) {}

    util::Expected<std::vector<Statement>> run() {
        std::vector<Statement> out;
        KeyPath section;
        if (m_text.starts_with("\xEF\xBB\xBF")) {
            m_pos = 3; // a UTF-8 byte order mark, which toml++ skips too
        }
        while (!at_end()) {
            skip_blanks();
            if (at_end()) {
                break;
            }
            char c = peek();
            if (c == '\n' || c == '\r' || c == '#') {
                skip_to_next_line();
                continue;
            }
            Statement st;
            st.first_line = m_line;
            if (c == '[') {
                bool array = peek(1) == '[';
                m_pos += array ? 2 : 1;
                st.path = TRY(read_key());
                skip_blanks();
                if (peek() != ']' || (array && peek(1) != ']')) {
                    return error("expected ']' after a table name");
                }
                m_pos += array ? 2 : 1;
                st.kind = array ? StatementKind::array_table : StatementKind::table;
                section = st.path;
            } else {
                KeyPath key = TRY(read_key());
                skip_blanks();
                if (peek() != '=') {
                    return error("expected '=' after a key");
                }
                ++m_pos;
                TRY(skip_value());
                st.kind = StatementKind::key_value;
                st.path = section;
                st.path.insert(st.path.end(), key.begin(), key.end());
            }
            st.last_line = m_line;
            skip_to_next_line();
            out.push_back(std::move(st));
        }
        return out;
    }

private:
    bool at_end() const { return m_pos >= m_text.size(); }
    char peek(std::size_t ahead = 0) const {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
    }
    void advance() {
        if (m_text[m_pos] == '\n') {
            ++m_line;
        }
        ++m_pos;
    }
    void skip_blanks() {
        while (peek() == ' ' || peek() == '\t') {
            ++m_pos;
        }
    }
    // Skips the rest of the line (a trailing comment) and its ending.
    void skip_to_next_line() {
        while (!at_end() && peek() != '\n') {
            ++m_pos;
        }
        if (!at_end()) {
            advance();
        }
    }
    std::unexpected<util::Error> error(const std::string& what) const {
        return util::fail(util::ErrorCode::invalid_input,
                          m_label + ":" + std::to_string(m_line + 1) + ": " + what +
                              "; fix the file so that it is valid TOML");
    }

    util::Expected<std::string> read_basic_string() {
        ++m_pos; // opening quote
        std::string out;
        while (!at_end() && peek() != '"') {
            char c = peek();
            if (c == '\n') {
                return error("unterminated string");
            }
            if (c != '\\') {
                out += c;
                ++m_pos;
                continue;
            }
            char e = peek(1);
            m_pos += 2;
            switch (e) {
            case 'b':
                out += '\b';
                break;
            case 't':
                out += '\t';
                break;
            case 'n':
                out += '\n';
                break;
            case 'f':
                out += '\f';
                break;
            case 'r':
                out += '\r';
                break;
            case 'e':
                out += '\x1b';
                break;
            case 'u':
            case 'U': {
                std::size_t digits = e == 'u' ? 4 : 8;
                if (m_pos + digits > m_text.size()) {
                    return error("bad unicode escape");
                }
                unsigned long cp = 0;
                auto hex = m_text.substr(m_pos, digits);
                if (std::from_chars(hex.data(), hex.data() + hex.size(), cp, 16).ec !=
                    std::errc{}) {
                    return error("bad unicode escape");
                }
                append_utf8(out, cp);
                m_pos += digits;
                break;
            }
            default:
                out += e;
                break;
            }
        }
        if (at_end()) {
            return error("unterminated string");
        }
        ++m_pos;
        return out;
    }

    util::Expected<KeyPath> read_key() {
        KeyPath path;
        for (;;) {
            skip_blanks();
            char c = peek();
            if (c == '"') {
                path.push_back(TRY(read_basic_string()));
            } else if (c == '\'') {
                std::size_t end = m_text.find('\'', m_pos + 1);
                std::size_t eol = m_text.find('\n', m_pos + 1);
                if (end == std::string_view::npos || end > eol) {
                    return error("unterminated literal key");
                }
                path.emplace_back(m_text.substr(m_pos + 1, end - m_pos - 1));
                m_pos = end + 1;
            } else if (util::is_toml_bare_key_char(c)) {
                std::size_t start = m_pos;
                while (util::is_toml_bare_key_char(peek())) {
                    ++m_pos;
                }
                path.emplace_back(m_text.substr(start, m_pos - start));
            } else {
                return error("expected a key");
            }
            skip_blanks();
            if (peek() != '.') {
                return path;
            }
            ++m_pos;
        }
    }

    // Skips a multi-line string whose opening delimiter (three of quote) starts at m_pos.
    util::Expected<void> skip_multiline_string(char quote) {
        m_pos += 3;
        while (!at_end()) {
            if (quote == '"' && peek() == '\\') {
                ++m_pos;
                if (!at_end()) {
                    advance();
                }
                continue;
            }
            if (peek() == quote && peek(1) == quote && peek(2) == quote) {
                m_pos += 3;
                // Up to two more quotes belong to the content ("""a"""" is a" followed by end).
                for (int extra = 0; extra < 2 && peek() == quote; ++extra) {
                    ++m_pos;
                }
                return {};
            }
            advance();
        }
        return error("unterminated multi-line string");
    }

    util::Expected<void> skip_value() {
        int depth = 0;
        while (!at_end()) {
            char c = peek();
            if (c == '"' || c == '\'') {
                if (peek(1) == c && peek(2) == c) {
                    TRY(skip_multiline_string(c));
                } else if (c == '"') {
                    TRY(read_basic_string());
                } else {
                    std::size_t end = m_text.find('\'', m_pos + 1);
                    if (end == std::string_view::npos) {
                        return error("unterminated literal string");
                    }
                    m_pos = end + 1;
                }
                continue;
            }
            if (c == '#') {
                while (!at_end() && peek() != '\n') {
                    ++m_pos;
                }
                continue;
            }
            if (c == '\n') {
                if (depth == 0) {
                    return {};
                }
                advance();
                continue;
            }
            if (c == '[' || c == '{') {
                ++depth;
            } else if (c == ']' || c == '}') {
                --depth;
            }
            ++m_pos;
        }
        return {};
    }

    std::string_view m_text;
    const std::string& m_label;
    std::size_t m_pos = 0;
    std::size_t m_line = 0;
};

} // namespace

util::Expected<std::vector<Statement>> scan_statements(std::string_view text,
                                                       const std::string& label) {
    return Scanner(text, label).run();
}

std::vector<bool> continuation_lines(const std::vector<std::string>& lines, Masking masking) {
    std::vector<bool> inside(lines.size(), false);
    const std::string label;
    auto statements = Scanner(join_lines(mask_lines(lines, masking)), label).run();
    if (!statements) {
        return inside;
    }
    for (const auto& st : *statements) {
        for (std::size_t line = st.first_line + 1; line <= st.last_line && line < lines.size();
             ++line) {
            inside[line] = true;
        }
    }
    return inside;
}

} // namespace shimkeeper::containerd
