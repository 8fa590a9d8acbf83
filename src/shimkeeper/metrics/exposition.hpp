// Prometheus' text exposition format 0.0.4, written once for both of shimkeeper's outputs: the
// node's textfile for node_exporter (textfile.hpp) and the coordinator's /metrics
// (coordinator_metrics.hpp). A family is its HELP and TYPE lines, then its samples; label values
// and HELP text are escaped as the format says (a backslash, a newline, and in label values a
// double quote), numbers written without locale.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shimkeeper::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* k_exposition_content_type = "text/plain; version=0.0.4; charset=utf-8";

std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);
// Enough digits to round-trip; +Inf, -Inf and NaN as the format spells them.
std::string format_number(double value);

class Exposition {
public:
    void family(std::string_view name, std::string_view type, std::string_view help);
    void sample(std::string_view name, const Labels& labels, std::uint64_t value);
    void sample(std::string_view name, const Labels& labels, double value);
    void sample(std::string_view name, std::uint64_t value) { sample(name, {}, value); }

    const std::string& text() const { return m_text; }

private:
    void sample_text(std::string_view name, const Labels& labels, const std::string& value);
    std::string m_text;
};

} // namespace shimkeeper::metrics
