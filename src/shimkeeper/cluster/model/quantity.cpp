#include "shimkeeper/cluster/model/quantity.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace shimkeeper::cluster::model {

namespace {

using Digits = Quantity::Digits;

constexpr Digits k_digits_max = ~Digits{0};
// Kubernetes keeps nothing finer than a nano-unit.
constexpr int k_finest_exponent = -9;
// Far beyond any resource, small enough that exponent arithmetic cannot overflow an int.
constexpr int k_exponent_limit = 1000;

struct Suffix {
    std::string_view text;
    int decimal_exponent;
    int binary_exponent;
};

// Longest first, so that "Mi" is not read as "M" followed by "i".
constexpr std::array<Suffix, 15> k_suffixes = {{{"Ki", 0, 10},
                                                {"Mi", 0, 20},
                                                {"Gi", 0, 30},
                                                {"Ti", 0, 40},
                                                {"Pi", 0, 50},
                                                {"Ei", 0, 60},
                                                {"n", -9, 0},
                                                {"u", -6, 0},
                                                {"m", -3, 0},
                                                {"k", 3, 0},
                                                {"M", 6, 0},
                                                {"G", 9, 0},
                                                {"T", 12, 0},
                                                {"P", 15, 0},
                                                {"E", 18, 0}}};

bool times_would_overflow(Digits value, Digits factor) {
    return factor != 0 && value > k_digits_max / factor;
}

std::unexpected<std::string> not_a_quantity(std::string_view text, std::string_view why) {
    return std::unexpected("is \"" + std::string(text) + "\", not a quantity: " + std::string(why));
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// "e-3", "E6": an exponent in decimal notation (a signed integer).
std::expected<int, std::string> exponent_of(std::string_view text, std::string_view whole) {
    std::size_t at = 0;
    bool negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
        negative = text[at] == '-';
        ++at;
    }
    if (at == text.size()) {
        return not_a_quantity(whole, "an exponent needs digits after e or E");
    }
    int value = 0;
    for (; at < text.size(); ++at) {
        if (!is_digit(text[at])) {
            return not_a_quantity(whole, "an exponent is a whole number");
        }
        value = value * 10 + (text[at] - '0');
        if (value > k_exponent_limit) {
            return not_a_quantity(whole, "its exponent is out of range");
        }
    }
    return negative ? -value : value;
}

} // namespace

Quantity::Quantity(bool negative, Digits digits, int exponent)
    : m_negative(negative), m_digits(digits), m_exponent(exponent) {
    if (m_digits == 0) {
        m_negative = false;
        m_exponent = 0;
        return;
    }
    if (m_exponent < k_finest_exponent) {
        // Round up to whole nano-units.
        bool remainder = false;
        while (m_exponent < k_finest_exponent) {
            remainder = remainder || m_digits % 10 != 0;
            m_digits /= 10;
            ++m_exponent;
        }
        m_digits += remainder ? 1 : 0;
    }
    while (m_digits != 0 && m_digits % 10 == 0) {
        m_digits /= 10;
        ++m_exponent;
    }
}

std::expected<Quantity, std::string> Quantity::parse(std::string_view text) {
    std::size_t at = 0;
    bool negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
        negative = text[at] == '-';
        ++at;
    }
    Digits digits = 0;
    int exponent = 0;
    bool any_digit = false;
    bool point = false;
    for (; at < text.size() && (is_digit(text[at]) || (text[at] == '.' && !point)); ++at) {
        if (text[at] == '.') {
            point = true;
            continue;
        }
        any_digit = true;
        const auto digit = static_cast<Digits>(text[at] - '0');
        if (times_would_overflow(digits, 10) || digits * 10 > k_digits_max - digit) {
            return not_a_quantity(text, "it has more digits than an amount needs (at most 38)");
        }
        digits = digits * 10 + digit;
        exponent -= point ? 1 : 0;
    }
    if (!any_digit) {
        return not_a_quantity(text, "it must start with a number, such as 250m, 0.5, 1Gi or 1e3");
    }
    const std::string_view suffix = text.substr(at);
    if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
        auto power = exponent_of(suffix.substr(1), text);
        if (!power) {
            return std::unexpected(std::move(power).error());
        }
        return Quantity(negative, digits, exponent + *power);
    }
    if (suffix.empty()) {
        return Quantity(negative, digits, exponent);
    }
    for (const Suffix& known : k_suffixes) {
        if (suffix != known.text) {
            continue;
        }
        for (int bit = 0; bit < known.binary_exponent; ++bit) {
            // amount × 2^bits, exactly.
            if (times_would_overflow(digits, 2)) {
                return not_a_quantity(text, "it is larger than any resource");
            }
            digits *= 2;
        }
        return Quantity(negative, digits, exponent + known.decimal_exponent);
    }
    return not_a_quantity(text, "the suffix \"" + std::string(suffix) +
                                    "\" is none of Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, "
                                    "T, P, E or an exponent such as e3");
}

std::expected<Digits, std::string> Quantity::whole_units() const {
    if (!whole()) {
        return std::unexpected(std::string("is not a whole number"));
    }
    Digits value = m_digits;
    for (int power = 0; power < m_exponent; ++power) {
        if (times_would_overflow(value, 10)) {
            return std::unexpected(std::string("is larger than any resource"));
        }
        value *= 10;
    }
    return value;
}

} // namespace shimkeeper::cluster::model
