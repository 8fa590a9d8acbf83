#include "shimkeeper/containerd/toml_text.hpp"

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

bool is_bare_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

util::Expected<toml::table> parse_toml(std::string_view text, const std::string& label) {
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

std::string quote_key(std::string_view key) {
    if (!key.empty() && std::all_of(key.begin(), key.end(), is_bare_key_char)) {
        return std::string(key);
    }
    std::string out = "\"";
    for (char c : key) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7F) {
            static constexpr char k_hex[] = "0123456789ABCDEF";
            out += "\\u00";
            out += k_hex[u >> 4];
            out += k_hex[u & 0xF];
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string render_path(const KeyPath& path) {
    std::string out;
    for (const auto& part : path) {
        if (!out.empty()) {
            out += '.';
        }
        out += quote_key(part);
    }
    return out;
}

bool starts_with(const KeyPath& path, const KeyPath& prefix) {
    return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

} // namespace shimkeeper::containerd
