#include "shimkeeper/spec/table_reader.hpp"

#include "shimkeeper/spec/suggest.hpp"

#include <chrono>
#include <cmath>

namespace shimkeeper::spec {

namespace {

constexpr double k_max_seconds = 365.0 * 24 * 3600;

std::string_view type_name(toml::node_type type) {
    switch (type) {
    case toml::node_type::string:
        return "a string";
    case toml::node_type::integer:
        return "an integer";
    case toml::node_type::floating_point:
        return "a floating-point number";
    case toml::node_type::boolean:
        return "a boolean";
    case toml::node_type::table:
        return "a table";
    case toml::node_type::array:
        return "an array";
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date-time";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

bool before(const toml::source_position& a, const toml::source_position& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
}

} // namespace

Location location_of(const toml::source_region& region, const std::string& file) {
    return Location{file, static_cast<int>(region.begin.line),
                    static_cast<int>(region.begin.column)};
}

std::unexpected<util::Error> fail_at(const Location& where, const std::string& message) {
    return util::fail(util::ErrorCode::invalid_input, where.to_string() + ": " + message);
}

TableReader::TableReader(const toml::table& table, std::string label, const std::string& file)
    : m_table(table), m_label(std::move(label)), m_file(file) {}

Location TableReader::where() const {
    return location_of(m_table.source(), m_file);
}

Location TableReader::where(std::string_view key) const {
    const toml::node* node = m_table.get(key);
    return node != nullptr ? location_of(node->source(), m_file) : where();
}

util::Expected<void> TableReader::only_keys(std::initializer_list<std::string_view> allowed) const {
    const toml::key* first = nullptr;
    for (const auto& [key, value] : m_table) {
        bool known = false;
        for (std::string_view name : allowed) {
            known = known || key.str() == name;
        }
        if (!known && (first == nullptr || before(key.source().begin, first->source().begin))) {
            first = &key;
        }
    }
    if (first == nullptr) {
        return {};
    }
    std::string message = "unknown key '" + std::string(first->str()) + "' in " + m_label;
    if (auto suggestion = closest_word(first->str(), allowed)) {
        message += "; did you mean '" + std::string(*suggestion) + "'?";
    } else {
        message += "; valid keys here:";
        for (std::string_view name : allowed) {
            message += " " + std::string(name);
        }
    }
    return fail_at(location_of(first->source(), m_file), message);
}

std::unexpected<util::Error> TableReader::fail_key(std::string_view key,
                                                   const std::string& message) const {
    return fail_at(where(key), "'" + std::string(key) + "' in " + m_label + " " + message);
}

std::unexpected<util::Error> TableReader::wrong_type(std::string_view key,
                                                     std::string_view wanted) const {
    const toml::node* node = m_table.get(key);
    return fail_key(key, "must be " + std::string(wanted) + ", not " +
                             std::string(type_name(node->type())));
}

util::Expected<std::optional<std::string>> TableReader::string(std::string_view key) const {
    const toml::node* node = m_table.get(key);
    if (node == nullptr) {
        return std::nullopt;
    }
    if (const auto* value = node->as_string()) {
        return value->get();
    }
    return wrong_type(key, "a string");
}

util::Expected<std::optional<bool>> TableReader::boolean(std::string_view key) const {
    const toml::node* node = m_table.get(key);
    if (node == nullptr) {
        return std::nullopt;
    }
    if (const auto* value = node->as_boolean()) {
        return value->get();
    }
    return wrong_type(key, "a boolean (true or false)");
}

util::Expected<std::optional<std::int64_t>> TableReader::integer(std::string_view key) const {
    const toml::node* node = m_table.get(key);
    if (node == nullptr) {
        return std::nullopt;
    }
    if (const auto* value = node->as_integer()) {
        return value->get();
    }
    return wrong_type(key, "an integer");
}

util::Expected<std::optional<std::chrono::milliseconds>>
TableReader::seconds(std::string_view key) const {
    const toml::node* node = m_table.get(key);
    if (node == nullptr) {
        return std::nullopt;
    }
    double value = 0;
    if (const auto* integer_value = node->as_integer()) {
        value = static_cast<double>(integer_value->get());
    } else if (const auto* float_value = node->as_floating_point()) {
        value = float_value->get();
    } else {
        return wrong_type(key, "a number of seconds (e.g. 30 or 2.5)");
    }
    if (!(value > 0) || !std::isfinite(value)) {
        return fail_key(key, "must be a number of seconds greater than 0");
    }
    if (value > k_max_seconds) {
        return fail_key(key, "must be at most one year (31536000 seconds)");
    }
    auto ms = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(value * 1000.0)));
    return ms;
}

util::Expected<const toml::table*> TableReader::subtable(std::string_view key,
                                                         std::string_view how_to_write) const {
    const toml::node* node = m_table.get(key);
    if (node == nullptr) {
        return nullptr;
    }
    if (const auto* value = node->as_table()) {
        return value;
    }
    return wrong_type(key, "a table (" + std::string(how_to_write) + ")");
}

util::Expected<std::string> TableReader::required_string(std::string_view key,
                                                         std::string_view example) const {
    auto value = TRY(string(key));
    if (!value) {
        return fail_at(where(), m_label + " is missing required key '" + std::string(key) +
                                    "'; add e.g. " + std::string(example));
    }
    return std::move(*value);
}

} // namespace shimkeeper::spec
