#include "shimkeeper/metrics/exposition.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace shimkeeper::metrics {

namespace {

std::string escaped(std::string_view text, bool quote) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (quote && c == '"') {
            out += "\\\"";
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace

std::string escape_label_value(std::string_view value) {
    return escaped(value, true);
}

std::string escape_help(std::string_view help) {
    return escaped(help, false);
}

std::string format_number(double value) {
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value > 0 ? "+Inf" : "-Inf";
    }
    // The shortest text that reads back as the same double: 0.005, not 0.0050000000000000001.
    std::array<char, 32> text{};
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text.data(), text.size(), "%.*g", digits, value);
        if (std::strtod(text.data(), nullptr) == value) {
            break;
        }
    }
    return text.data();
}

void Exposition::family(std::string_view name, std::string_view type, std::string_view help) {
    m_text += "# HELP ";
    m_text += name;
    m_text += " " + escape_help(help) + "\n# TYPE ";
    m_text += name;
    m_text += " ";
    m_text += type;
    m_text += "\n";
}

void Exposition::sample(std::string_view name, const Labels& labels, std::uint64_t value) {
    sample_text(name, labels, std::to_string(value));
}

void Exposition::sample(std::string_view name, const Labels& labels, double value) {
    sample_text(name, labels, format_number(value));
}

void Exposition::sample_text(std::string_view name, const Labels& labels,
                             const std::string& value) {
    m_text += name;
    if (!labels.empty()) {
        const char* separator = "{";
        for (const auto& [key, label_value] : labels) {
            m_text += separator;
            m_text += key + "=\"" + escape_label_value(label_value) + "\"";
            separator = ",";
        }
        m_text += "}";
    }
    m_text += " " + value + "\n";
}

} // namespace shimkeeper::metrics
