#include "shimkeeper/cli/status_daemon.hpp"

#include "shimkeeper/util/fs.hpp"

#include <iostream>

namespace shimkeeper::cli {

using Json = nlohmann::json;

Json daemon_status_json(const std::filesystem::path& status_file) {
    std::error_code ec;
    if (!std::filesystem::exists(status_file, ec)) {
        return {{"file", status_file.string()},
                {"error", "no status file (the daemon is not running here, or it was started "
                          "with another --status-file)"}};
    }
    auto text = util::read_file(status_file);
    if (!text) {
        return {{"file", status_file.string()}, {"error", text.error().message()}};
    }
    Json parsed = Json::parse(*text, nullptr, false);
    if (!parsed.is_object()) {
        return {{"file", status_file.string()}, {"error", "not a JSON object"}};
    }
    parsed["file"] = status_file.string();
    return parsed;
}

namespace {

std::string text_at(const Json& object, const char* pointer) {
    const Json value = object.value(Json::json_pointer(pointer), Json());
    return value.is_string() ? value.get<std::string>() : std::string();
}

// Each entry of an object of strings (by Shim name), one line each.
void print_entries(const Json& entries, const std::string& label) {
    if (!entries.is_object()) {
        return;
    }
    for (const auto& [shim, why] : entries.items()) {
        std::cout << "  " << label << " " << shim << ": "
                  << (why.is_string() ? why.get<std::string>() : why.dump()) << "\n";
    }
}

} // namespace

void print_daemon_status(const Json& daemon) {
    const std::string file = daemon.value("file", "");
    if (daemon.contains("error")) {
        std::cout << "Daemon: " << daemon["error"].get<std::string>() << " (" << file << ")\n";
        return;
    }
    std::cout << "Daemon: " << text_at(daemon, "/daemon/state");
    if (const std::string success = text_at(daemon, "/daemon/last_success"); !success.empty()) {
        std::cout << ", last converged " << success;
    }
    std::cout << " (" << file << ")\n";
    if (const std::string line = text_at(daemon, "/daemon/status"); !line.empty()) {
        std::cout << "  " << line << "\n";
    }
    const Json result = daemon.value("result", Json::object());
    if (result.is_object()) {
        print_entries(result.value(k_result_waiting, Json()), "waiting:");
        print_entries(result.value(k_result_blocked, Json()), "removal held back:");
    }
}

} // namespace shimkeeper::cli
