// Reads the JSON files shimkeeper writes for itself (state.json, journal.json) field by field:
// each missing field or wrong type is an Error naming the file, the place in it and the field,
// and saying what to do. The one way these files are read.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::util {

class JsonReader {
public:
    // where: "the top level", "generations[2]"; repair: what the user should do about damage.
    JsonReader(const std::filesystem::path& file, std::string where, std::string repair)
        : m_file(file), m_where(std::move(where)), m_repair(std::move(repair)) {}

    JsonReader at(std::string where) const {
        return JsonReader(m_file, std::move(where), m_repair);
    }

    Expected<const nlohmann::json*> field(const nlohmann::json& object, const char* key,
                                          nlohmann::json::value_t type) const;
    Expected<std::string> string(const nlohmann::json& object, const char* key) const;
    Expected<int> integer(const nlohmann::json& object, const char* key) const;
    Expected<bool> boolean(const nlohmann::json& object, const char* key) const;
    Expected<std::vector<std::string>> strings(const nlohmann::json& object, const char* key) const;
    // null or a string
    Expected<std::optional<std::string>> nullable_string(const nlohmann::json& object,
                                                         const char* key) const;
    Expected<std::optional<int>> nullable_integer(const nlohmann::json& object,
                                                  const char* key) const;
    // Fields added after a format's first version: absent means the old default.
    Expected<std::string> optional_string(const nlohmann::json& object, const char* key) const;
    Expected<bool> optional_boolean(const nlohmann::json& object, const char* key) const;

    std::unexpected<Error> bad(const std::string& what) const;

private:
    std::filesystem::path m_file;
    std::string m_where;
    std::string m_repair;
};

// Parses a whole file's text; an error when it is not a JSON object.
Expected<nlohmann::json> parse_json_object(const std::string& text, const JsonReader& top);

} // namespace shimkeeper::util
