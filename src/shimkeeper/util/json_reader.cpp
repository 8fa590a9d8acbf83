#include "shimkeeper/util/json_reader.hpp"

namespace shimkeeper::util {

using nlohmann::json;

Expected<const json*> JsonReader::field(const json& object, const char* key,
                                        json::value_t type) const {
    auto it = object.find(key);
    if (it == object.end()) {
        return bad(std::string("is missing \"") + key + "\"");
    }
    if (it->type() != type &&
        !(type == json::value_t::number_integer && it->is_number_unsigned())) {
        return bad(std::string("has \"") + key + "\" of type " + it->type_name());
    }
    return &*it;
}

Expected<std::string> JsonReader::string(const json& object, const char* key) const {
    const json* value = TRY(field(object, key, json::value_t::string));
    return value->get_ref<const std::string&>();
}

Expected<int> JsonReader::integer(const json& object, const char* key) const {
    const json* value = TRY(field(object, key, json::value_t::number_integer));
    if (!value->is_number_integer() || value->get<std::int64_t>() < 0 ||
        value->get<std::int64_t>() > 1'000'000'000) {
        return bad(std::string("has an out-of-range \"") + key + "\"");
    }
    return value->get<int>();
}

Expected<bool> JsonReader::boolean(const json& object, const char* key) const {
    const json* value = TRY(field(object, key, json::value_t::boolean));
    return value->get<bool>();
}

Expected<std::vector<std::string>> JsonReader::strings(const json& object, const char* key) const {
    const json* array = TRY(field(object, key, json::value_t::array));
    std::vector<std::string> out;
    for (const json& item : *array) {
        if (!item.is_string()) {
            return bad(std::string("has a non-string in \"") + key + "\"");
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

Expected<std::optional<std::string>> JsonReader::nullable_string(const json& object,
                                                                 const char* key) const {
    if (auto it = object.find(key); it != object.end() && it->is_null()) {
        return std::nullopt;
    }
    return string(object, key);
}

Expected<std::optional<int>> JsonReader::nullable_integer(const json& object,
                                                          const char* key) const {
    if (auto it = object.find(key); it != object.end() && it->is_null()) {
        return std::nullopt;
    }
    return integer(object, key);
}

Expected<std::string> JsonReader::optional_string(const json& object, const char* key) const {
    return object.contains(key) ? string(object, key) : Expected<std::string>(std::string());
}

Expected<bool> JsonReader::optional_boolean(const json& object, const char* key) const {
    return object.contains(key) ? boolean(object, key) : Expected<bool>(false);
}

std::unexpected<Error> JsonReader::bad(const std::string& what) const {
    return fail(ErrorCode::io, m_file.string() + ": " + m_where + " " + what + "; " + m_repair);
}

Expected<json> parse_json_object(const std::string& text, const JsonReader& top) {
    json document = json::parse(text, nullptr, false);
    if (document.is_discarded()) {
        return top.bad("is not valid JSON (truncated or edited by hand?)");
    }
    if (!document.is_object()) {
        return top.bad("is not a JSON object");
    }
    return document;
}

} // namespace shimkeeper::util
