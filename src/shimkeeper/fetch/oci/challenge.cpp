#include "shimkeeper/fetch/oci/challenge.hpp"

#include <cctype>

namespace shimkeeper::fetch::oci {

namespace {

std::string lower(std::string_view text) {
    std::string out;
    for (char c : text) {
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

void skip_space(std::string_view& text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == ',')) {
        text.remove_prefix(1);
    }
}

// A quoted-string (backslash escapes honoured) or a token.
std::string take_value(std::string_view& text) {
    std::string value;
    if (!text.empty() && text.front() == '"') {
        text.remove_prefix(1);
        while (!text.empty() && text.front() != '"') {
            if (text.front() == '\\' && text.size() > 1) {
                text.remove_prefix(1);
            }
            value += text.front();
            text.remove_prefix(1);
        }
        if (!text.empty()) {
            text.remove_prefix(1);
        }
        return value;
    }
    while (!text.empty() && text.front() != ',' && text.front() != ' ') {
        value += text.front();
        text.remove_prefix(1);
    }
    return value;
}

} // namespace

std::string Challenge::param(const std::string& key) const {
    auto found = params.find(key);
    return found == params.end() ? std::string() : found->second;
}

std::optional<Challenge> parse_challenge(std::string_view header) {
    skip_space(header);
    auto end = header.find(' ');
    Challenge challenge{lower(header.substr(0, end)), {}};
    if (challenge.scheme.empty()) {
        return std::nullopt;
    }
    header = end == std::string_view::npos ? std::string_view() : header.substr(end);
    while (true) {
        skip_space(header);
        auto equals = header.find('=');
        if (header.empty() || equals == std::string_view::npos) {
            break;
        }
        std::string key = lower(header.substr(0, equals));
        header.remove_prefix(equals + 1);
        challenge.params[key] = take_value(header);
    }
    return challenge;
}

} // namespace shimkeeper::fetch::oci
