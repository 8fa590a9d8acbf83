#include "shimkeeper/metrics/counters.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/json_reader.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::metrics {

namespace {

constexpr const char* k_repair = "delete it to start the counters from zero";

util::Expected<std::uint64_t> count_field(const util::JsonReader& reader,
                                          const nlohmann::json& object, const char* key) {
    const auto* value = TRY(reader.field(object, key, nlohmann::json::value_t::number_unsigned));
    return value->get<std::uint64_t>();
}

util::Expected<double> number_field(const util::JsonReader& reader, const nlohmann::json& object,
                                    const char* key) {
    auto found = object.find(key);
    if (found == object.end() || !found->is_number()) {
        return reader.bad(std::string("has no number \"") + key + "\"");
    }
    return found->get<double>();
}

} // namespace

void count(Counters& counters, const TransactionRecord& record) {
    ++counters.transactions[record.result];
    if (record.rolled_back) {
        ++counters.rollbacks;
    }
    counters.containerd_restarts += static_cast<std::uint64_t>(std::max(record.restarts, 0));
    counters.last = LastTransaction{record.finished_unix, record.duration_seconds, record.result};
}

util::Expected<Counters> load_counters(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return Counters{};
    }
    const util::JsonReader top(file, "the top level", k_repair);
    const auto text = TRY(util::read_file(file));
    const auto json = TRY(util::parse_json_object(text, top));
    Counters counters;
    const auto* transactions =
        TRY(top.field(json, "transactions", nlohmann::json::value_t::object));
    const util::JsonReader by_result = top.at("transactions");
    for (const auto& [result, _] : transactions->items()) {
        counters.transactions[result] = TRY(count_field(by_result, *transactions, result.c_str()));
    }
    counters.rollbacks = TRY(count_field(top, json, "rollbacks"));
    counters.containerd_restarts = TRY(count_field(top, json, "containerd_restarts"));
    // contains/at rather than an iterator from find: GCC 12 cannot see that the iterator's
    // object is non-null and warns (-Wnull-dereference) through nlohmann's inlined code.
    if (json.contains("last_transaction") && !json.at("last_transaction").is_null()) {
        const nlohmann::json& last = json.at("last_transaction");
        const util::JsonReader reader = top.at("last_transaction");
        if (!last.is_object()) {
            return reader.bad("is not an object");
        }
        counters.last = LastTransaction{TRY(number_field(reader, last, "finished_unix")),
                                        TRY(number_field(reader, last, "duration_seconds")),
                                        TRY(reader.string(last, "result"))};
    }
    return counters;
}

util::Expected<void> save_counters(const std::filesystem::path& file, const Counters& counters) {
    nlohmann::json json = {{"transactions", counters.transactions},
                           {"rollbacks", counters.rollbacks},
                           {"containerd_restarts", counters.containerd_restarts},
                           {"last_transaction", nullptr}};
    if (counters.last) {
        json["last_transaction"] = {{"finished_unix", counters.last->finished_unix},
                                    {"duration_seconds", counters.last->duration_seconds},
                                    {"result", counters.last->result}};
    }
    return util::write_file_atomic(file, json.dump(2) + "\n");
}

} // namespace shimkeeper::metrics
