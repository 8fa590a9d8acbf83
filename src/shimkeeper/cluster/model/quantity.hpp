// A Kubernetes resource quantity ("250m", "1.5Gi", "1e3") read as an exact amount, so that two
// spellings of one amount compare equal. The API server keeps a RuntimeClass's overhead in its own
// canonical spelling ("0.5" comes back as "500m", "1024Mi" as "1Gi"); a coordinator comparing the
// text it wrote with the text it reads back would patch the RuntimeClass on every pass.
// Amounts finer than a nano-unit round up to one, as the API server rounds them.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace shimkeeper::cluster::model {

class Quantity {
public:
    __extension__ using Digits = unsigned __int128;

    // The quantity `text` spells, or what is wrong with it ("is not a quantity: ...").
    static std::expected<Quantity, std::string> parse(std::string_view text);

    bool negative() const { return m_negative; }
    // No fraction left: the amount is a whole number of units.
    bool whole() const { return m_exponent >= 0; }
    // The amount as a whole number of units, when it is one and fits.
    std::expected<Digits, std::string> whole_units() const;

    bool operator==(const Quantity&) const = default;

private:
    Quantity(bool negative, Digits digits, int exponent);

    bool m_negative = false;
    Digits m_digits = 0; // amount = digits × 10^exponent, digits without trailing zeros
    int m_exponent = 0;
};

} // namespace shimkeeper::cluster::model
