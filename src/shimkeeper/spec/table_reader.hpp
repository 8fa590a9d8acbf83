// Typed, located reads from one TOML table. Every failure becomes an invalid_input Error
// reading "<file>:<line>:<column>: <message>", pointing at the offending value (or at the table
// itself when a required key is missing). `label` is how the table is named in messages:
// "[[shim]]", "[shim.fetch]", "[containerd]", "the top level".
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>

namespace shimkeeper::spec {

Location location_of(const toml::source_region& region, const std::string& file);

// "<file>:<line>:<column>: <message>" as an invalid_input error.
std::unexpected<util::Error> fail_at(const Location& where, const std::string& message);

class TableReader {
public:
    TableReader(const toml::table& table, std::string label, const std::string& file);

    const std::string& label() const { return m_label; }
    const std::string& file() const { return m_file; }
    const toml::table& table() const { return m_table; }

    // Where the table starts, and where a key's value starts (the table when absent).
    Location where() const;
    Location where(std::string_view key) const;

    bool has(std::string_view key) const { return m_table.contains(key); }

    // Refuses any key not in `allowed`, naming the first one in the file and a close
    // allowed key if there is one.
    util::Expected<void> only_keys(std::initializer_list<std::string_view> allowed) const;

    // Absent keys give nullopt; a present key of another type is an error.
    util::Expected<std::optional<std::string>> string(std::string_view key) const;
    util::Expected<std::optional<bool>> boolean(std::string_view key) const;
    util::Expected<std::optional<std::int64_t>> integer(std::string_view key) const;
    // A number of seconds (integer or float), > 0 and at most a year, as milliseconds.
    util::Expected<std::optional<std::chrono::milliseconds>> seconds(std::string_view key) const;
    // nullptr when absent.
    util::Expected<const toml::table*> subtable(std::string_view key,
                                                std::string_view how_to_write) const;

    // A required string: missing is an error naming the key and what to write.
    util::Expected<std::string> required_string(std::string_view key,
                                                std::string_view example) const;

    // An error located at the key's value: "'<key>' in <label> <message>".
    std::unexpected<util::Error> fail_key(std::string_view key, const std::string& message) const;

private:
    std::unexpected<util::Error> wrong_type(std::string_view key, std::string_view wanted) const;

    const toml::table& m_table;
    std::string m_label;
    const std::string& m_file;
};

} // namespace shimkeeper::spec
