// state.json: {"version":1,"current":N|null,"generations":[{"number","created","shims":[...]}]}.
// A missing file is an empty state (a fresh node); anything unreadable is an error naming the
// file, never a silent reset, because the generations are what rollback depends on.
#include "shimkeeper/store/state.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/json_reader.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace shimkeeper::store {

namespace {

using nlohmann::json;

constexpr int k_state_version = 1;

const InstalledShim* find_shim(const std::vector<InstalledShim>& shims, const std::string& name) {
    auto it = std::ranges::find(shims, name, &InstalledShim::name);
    return it == shims.end() ? nullptr : &*it;
}

using util::JsonReader;

constexpr const char* k_repair = "repair it or move it away (losing the rollback history)";

util::Expected<InstalledShim> parse_shim(const json& object, const JsonReader& reader) {
    if (!object.is_object()) {
        return reader.bad("is not an object");
    }
    InstalledShim shim;
    shim.name = TRY(reader.string(object, "name"));
    shim.handler = TRY(reader.string(object, "handler"));
    shim.runtime_type = TRY(reader.string(object, "runtime_type"));
    shim.binary = TRY(reader.string(object, "binary"));
    shim.binary_path = TRY(reader.string(object, "binary_path"));
    shim.version = TRY(reader.string(object, "version"));
    shim.digest = TRY(reader.string(object, "digest"));
    shim.url = TRY(reader.string(object, "url"));
    shim.path = TRY(reader.optional_string(object, "path"));
    shim.options_toml = TRY(reader.string(object, "options_toml"));
    shim.allow_unverified = TRY(reader.optional_boolean(object, "allow_unverified"));
    shim.adopt = TRY(reader.optional_boolean(object, "adopt"));
    shim.runtime_class = TRY(reader.optional_string(object, "runtime_class"));
    shim.origin = TRY(reader.optional_string(object, "origin"));
    shim.runtime_type_derivation = TRY(reader.optional_string(object, "runtime_type_derivation"));
    return shim;
}

util::Expected<Generation> parse_generation(const std::filesystem::path& file, const json& object,
                                            std::size_t index) {
    JsonReader reader(file, "generations[" + std::to_string(index) + "]", k_repair);
    if (!object.is_object()) {
        return reader.bad("is not an object");
    }
    Generation generation;
    generation.number = TRY(reader.integer(object, "number"));
    generation.created = TRY(reader.string(object, "created"));
    const json* shims = TRY(reader.field(object, "shims", json::value_t::array));
    for (std::size_t i = 0; i < shims->size(); ++i) {
        JsonReader shim_reader = reader.at("generation " + std::to_string(generation.number) +
                                           " shims[" + std::to_string(i) + "]");
        generation.shims.push_back(TRY(parse_shim((*shims)[i], shim_reader)));
    }
    return generation;
}

json shim_to_json(const InstalledShim& shim) {
    json out{{"name", shim.name},
             {"handler", shim.handler},
             {"runtime_type", shim.runtime_type},
             {"binary", shim.binary},
             {"binary_path", shim.binary_path},
             {"version", shim.version},
             {"digest", shim.digest},
             {"url", shim.url},
             {"path", shim.path},
             {"options_toml", shim.options_toml},
             {"allow_unverified", shim.allow_unverified},
             {"adopt", shim.adopt},
             {"runtime_class", shim.runtime_class},
             {"origin", shim.origin}};
    if (!shim.runtime_type_derivation.empty()) {
        out["runtime_type_derivation"] = shim.runtime_type_derivation;
    }
    return out;
}

} // namespace

const InstalledShim* Generation::find(const std::string& name) const {
    return find_shim(shims, name);
}

const Generation* StoreState::find(int number) const {
    auto it = std::ranges::find(generations, number, &Generation::number);
    return it == generations.end() ? nullptr : &*it;
}

const Generation* StoreState::current_generation() const {
    return current ? find(*current) : nullptr;
}

int StoreState::next_number() const {
    int highest = 0;
    for (const Generation& generation : generations) {
        highest = std::max(highest, generation.number);
    }
    return highest + 1;
}

util::Expected<StoreState> load_state(const std::filesystem::path& state_file) {
    auto text = util::read_file(state_file);
    if (!text) {
        if (text.error().code() == util::ErrorCode::not_found) {
            return StoreState{};
        }
        return std::unexpected(std::move(text).error());
    }
    const JsonReader top(state_file, "the top level", k_repair);
    const json document = TRY(util::parse_json_object(*text, top));
    int version = TRY(top.integer(document, "version"));
    if (version != k_state_version) {
        return top.bad("has \"version\": " + std::to_string(version) +
                       ", which this shimkeeper does not know (it writes version " +
                       std::to_string(k_state_version) + "; was it written by a newer one?)");
    }
    StoreState state;
    const json* generations = TRY(top.field(document, "generations", json::value_t::array));
    for (std::size_t i = 0; i < generations->size(); ++i) {
        state.generations.push_back(TRY(parse_generation(state_file, (*generations)[i], i)));
    }
    std::ranges::sort(state.generations, {}, &Generation::number);
    for (std::size_t i = 1; i < state.generations.size(); ++i) {
        if (state.generations[i].number == state.generations[i - 1].number) {
            return top.bad("lists generation " + std::to_string(state.generations[i].number) +
                           " twice");
        }
    }
    auto current = document.find("current");
    if (current == document.end()) {
        return top.bad("is missing \"current\"");
    }
    if (!current->is_null()) {
        state.current = TRY(top.integer(document, "current"));
        if (state.find(*state.current) == nullptr) {
            return top.bad("names current generation " + std::to_string(*state.current) +
                           ", which it does not list");
        }
    }
    return state;
}

util::Expected<void> save_state(const std::filesystem::path& state_file, const StoreState& state) {
    json generations = json::array();
    for (const Generation& generation : state.generations) {
        json shims = json::array();
        for (const InstalledShim& shim : generation.shims) {
            shims.push_back(shim_to_json(shim));
        }
        generations.push_back(
            json{{"number", generation.number}, {"created", generation.created}, {"shims", shims}});
    }
    json document{{"version", k_state_version},
                  {"current", state.current ? json(*state.current) : json(nullptr)},
                  {"generations", generations}};
    return util::write_file_atomic(
        state_file, document.dump(2, ' ', false, json::error_handler_t::replace) + "\n", 0644);
}

} // namespace shimkeeper::store
