#include "shimkeeper/util/base64.hpp"

namespace shimkeeper::util {

namespace {

int value_of(char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

bool is_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

} // namespace

std::optional<std::string> decode_base64(std::string_view text) {
    std::string out;
    unsigned bits = 0;
    int bit_count = 0;
    int padding = 0;
    int symbols = 0;
    for (char c : text) {
        if (is_space(c)) {
            continue;
        }
        if (c == '=') {
            ++padding;
            ++symbols;
            continue;
        }
        int value = value_of(c);
        if (value < 0 || padding > 0) {
            return std::nullopt; // a stray character, or data after the padding
        }
        ++symbols;
        bits = (bits << 6) | static_cast<unsigned>(value);
        bit_count += 6;
        if (bit_count >= 8) {
            bit_count -= 8;
            out.push_back(static_cast<char>((bits >> bit_count) & 0xFF));
        }
    }
    if (symbols % 4 != 0 || padding > 2) {
        return std::nullopt;
    }
    return out;
}

} // namespace shimkeeper::util
