#include "shimkeeper/reconcile/journal.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

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

std::optional<std::string> string_or_null(const nlohmann::json& value) {
    if (value.is_null()) {
        return std::nullopt;
    }
    return value.get<std::string>();
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
    try {
        auto j = nlohmann::json::parse(*text);
        JournalEntry e;
        e.id = j.at("id");
        e.kind = j.at("kind");
        e.started = j.at("started");
        e.finished = j.at("finished");
        if (!j.at("from_generation").is_null()) {
            e.from_generation = j.at("from_generation").get<int>();
        }
        e.to_generation = j.at("to_generation");
        e.shims = j.at("shims").get<std::vector<std::string>>();
        for (const auto& f : j.at("files")) {
            e.files.push_back({f.at("node_path"), f.at("existed_before"), f.at("backup")});
        }
        for (const auto& l : j.at("links")) {
            e.links.push_back(
                {l.at("binary"), string_or_null(l.at("before")), string_or_null(l.at("after"))});
        }
        e.steps = j.at("steps").get<std::vector<std::string>>();
        const std::string result = j.at("result");
        auto it = std::find_if(std::begin(k_results), std::end(k_results),
                               [&](const auto& r) { return result == r.second; });
        if (it == std::end(k_results)) {
            return util::fail(util::ErrorCode::io,
                              file().string() + ": unknown transaction result '" + result + "'");
        }
        e.result = it->first;
        e.reason = j.at("reason");
        e.restarts = j.at("restarts");
        return e;
    } catch (const nlohmann::json::exception& ex) {
        return util::fail(util::ErrorCode::io,
                          file().string() + " is damaged (" + ex.what() +
                              "); inspect it, then move it away to start afresh");
    }
}

util::Expected<void> Journal::save(const JournalEntry& e) const {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : e.files) {
        files.push_back({{"node_path", f.node_path},
                         {"existed_before", f.existed_before},
                         {"backup", f.backup}});
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

std::string now_rfc3339() {
    std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buffer;
}

std::string new_transaction_id() {
    std::string stamp = now_rfc3339();
    stamp.erase(std::remove(stamp.begin(), stamp.end(), '-'), stamp.end());
    stamp.erase(std::remove(stamp.begin(), stamp.end(), ':'), stamp.end());
    std::random_device random;
    char suffix[8];
    std::snprintf(suffix, sizeof suffix, "%06x", random() & 0xffffff);
    return stamp + "-" + suffix;
}

} // namespace shimkeeper::reconcile
