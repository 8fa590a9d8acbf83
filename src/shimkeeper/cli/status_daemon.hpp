// The daemon's side of `status`: what `shimkeeper run` last wrote to its status file
// (daemon/status_file.hpp). Only the daemon knows what it waits for in a rolling rollout: a
// write to its own Node that the API server refuses cannot be said on that Node, so `status`
// shows it from here, with the server's message, beside the removals the daemon holds back.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

// Keys of the daemon's result (status.json's "result") that `run` writes and `status` shows:
// by Shim name, why it waits for its rollout slot, and why its removal is held back.
inline constexpr const char* k_result_waiting = "waiting";
inline constexpr const char* k_result_blocked = "blocked";

// The file's content, or {"error": why} when it is missing (no daemon here, or another
// --status-file) or unreadable; "file" names it either way.
nlohmann::json daemon_status_json(const std::filesystem::path& status_file);
void print_daemon_status(const nlohmann::json& daemon);

} // namespace shimkeeper::cli
