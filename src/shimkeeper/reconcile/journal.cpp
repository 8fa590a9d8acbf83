#include "shimkeeper/reconcile/journal.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/json_reader.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

namespace shimkeeper::reconcile {

namespace {

constexpr std::pair<TxnResult, const char*> k_results[] = {
    {TxnResult::in_progress, "in-progress"},
    {TxnResult::committed, "committed"},
    {TxnResult::failed, "failed"},
    {TxnResult::rolled_back, "rolled-back"},
    {TxnResult::rollback_failed, "rollback-failed"},
};

nlohmann::json optional_string(const std::optional<std::string>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

} // namespace

const char* to_string(TxnResult result) {
    for (const auto& [value, name] : k_results) {
        if (value == result) {
            return name;
        }
    }
    return "unknown";
}

bool JournalEntry::has_step(const std::string& step) const {
    return std::find(steps.begin(), steps.end(), step) != steps.end();
}

util::Expected<std::optional<JournalEntry>> Journal::load() const {
    auto text = util::read_file(file());
    if (!text) {
        if (text.error().code() == util::ErrorCode::not_found) {
            return std::nullopt;
        }
        return std::unexpected(text.error());
    }
    const util::JsonReader top(file(), "the top level",
                               "inspect it, then move it away to start afresh");
    const nlohmann::json j = TRY(util::parse_json_object(*text, top));
    JournalEntry e;
    e.id = TRY(top.string(j, "id"));
    e.kind = TRY(top.string(j, "kind"));
    e.started = TRY(top.string(j, "started"));
    e.finished = TRY(top.string(j, "finished"));
    e.from_generation = TRY(top.nullable_integer(j, "from_generation"));
    e.to_generation = TRY(top.integer(j, "to_generation"));
    e.shims = TRY(top.strings(j, "shims"));
    const auto* files = TRY(top.field(j, "files", nlohmann::json::value_t::array));
    for (std::size_t i = 0; i < files->size(); ++i) {
        const auto& f = (*files)[i];
        const util::JsonReader at = top.at("files[" + std::to_string(i) + "]");
        e.files.push_back({TRY(at.string(f, "node_path")), TRY(at.boolean(f, "existed_before")),
                           TRY(at.string(f, "backup")),
                           TRY(at.optional_string(f, "after_sha256"))});
    }
    const auto* links = TRY(top.field(j, "links", nlohmann::json::value_t::array));
    for (std::size_t i = 0; i < links->size(); ++i) {
        const auto& l = (*links)[i];
        const util::JsonReader at = top.at("links[" + std::to_string(i) + "]");
        e.links.push_back({TRY(at.string(l, "binary")), TRY(at.nullable_string(l, "before")),
                           TRY(at.nullable_string(l, "after"))});
    }
    e.steps = TRY(top.strings(j, "steps"));
    const std::string result = TRY(top.string(j, "result"));
    auto it = std::find_if(std::begin(k_results), std::end(k_results),
                           [&](const auto& r) { return result == r.second; });
    if (it == std::end(k_results)) {
        return top.bad("has an unknown transaction result '" + result + "'");
    }
    e.result = it->first;
    e.reason = TRY(top.string(j, "reason"));
    e.restarts = TRY(top.integer(j, "restarts"));
    return e;
}

util::Expected<void> Journal::save(const JournalEntry& e) const {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : e.files) {
        files.push_back({{"node_path", f.node_path},
                         {"existed_before", f.existed_before},
                         {"backup", f.backup},
                         {"after_sha256", f.after_sha256}});
    }
    nlohmann::json links = nlohmann::json::array();
    for (const auto& l : e.links) {
        links.push_back({{"binary", l.binary},
                         {"before", optional_string(l.before)},
                         {"after", optional_string(l.after)}});
    }
    nlohmann::json j{
        {"id", e.id},
        {"kind", e.kind},
        {"started", e.started},
        {"finished", e.finished},
        {"from_generation",
         e.from_generation ? nlohmann::json(*e.from_generation) : nlohmann::json(nullptr)},
        {"to_generation", e.to_generation},
        {"shims", e.shims},
        {"files", files},
        {"links", links},
        {"steps", e.steps},
        {"result", to_string(e.result)},
        {"reason", e.reason},
        {"restarts", e.restarts},
    };
    TRY(util::create_directories(m_state_dir));
    return util::write_file_atomic(file(), j.dump(2) + "\n", 0600);
}

std::filesystem::path Journal::backup_dir(const std::string& txn_id) const {
    return m_state_dir / "backups" / txn_id;
}

util::Expected<void> Journal::prune_backups(std::size_t keep) const {
    std::vector<std::filesystem::path> folders;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_state_dir / "backups", ec)) {
        folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    for (std::size_t i = 0; i + keep < folders.size(); ++i) {
        TRY(util::remove_all(folders[i]));
    }
    return {};
}

std::string new_transaction_id() {
    std::string stamp = util::now_rfc3339();
    stamp.erase(std::remove(stamp.begin(), stamp.end(), '-'), stamp.end());
    stamp.erase(std::remove(stamp.begin(), stamp.end(), ':'), stamp.end());
    std::random_device random;
    char suffix[8];
    std::snprintf(suffix, sizeof suffix, "%06x", random() & 0xffffff);
    return stamp + "-" + suffix;
}

} // namespace shimkeeper::reconcile
