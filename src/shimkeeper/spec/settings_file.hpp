// The agent settings on their own: the settings tables of shimkeeper.toml ([containerd],
// [systemd], [store], [health], [fetch]). Its [[shim]] entries are a desired-state source
// (sources.hpp) and are not looked at here, so a broken shim never hides the settings.
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>

namespace shimkeeper::spec {

// An absent file gives the defaults, unless `required` (the user named it with -c).
util::Expected<AgentSettings> load_agent_settings(const std::filesystem::path& agent_config,
                                                  bool required);

} // namespace shimkeeper::spec
