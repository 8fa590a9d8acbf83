#include "shimkeeper/util/toml_quote.hpp"

#include <algorithm>

namespace shimkeeper::util {

bool is_toml_bare_key_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

std::string toml_quoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (byte < 0x20 || byte == 0x7f) {
                static constexpr char k_hex[] = "0123456789ABCDEF";
                out += "\\u00";
                out += k_hex[byte >> 4];
                out += k_hex[byte & 0xf];
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

std::string toml_key(std::string_view key) {
    const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), is_toml_bare_key_char);
    return bare ? std::string(key) : toml_quoted(key);
}

} // namespace shimkeeper::util
