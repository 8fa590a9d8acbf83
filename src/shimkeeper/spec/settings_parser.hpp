// The agent tables of shimkeeper.toml — [containerd], [systemd], [store], [health], [fetch],
// [kube] —
// onto AgentSettings. Absent keys keep AgentSettings' defaults ("autodetect").
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/util/error.hpp"

#include <array>
#include <string>
#include <string_view>
#include <toml++/toml.h>

namespace shimkeeper::spec {

// The top-level keys that hold agent settings.
inline constexpr std::array<std::string_view, 7> k_agent_tables = {
    "containerd", "systemd", "store", "health", "fetch", "kube", "metrics"};

// `root` is the whole file; keys other than the agent tables are ignored here.
util::Expected<AgentSettings> parse_agent_settings(const toml::table& root,
                                                   const std::string& file);

} // namespace shimkeeper::spec
