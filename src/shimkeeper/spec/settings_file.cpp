#include "shimkeeper/spec/settings_file.hpp"

#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/settings_parser.hpp"
#include "shimkeeper/spec/table_reader.hpp"
#include "shimkeeper/util/fs.hpp"

namespace shimkeeper::spec {

util::Expected<AgentSettings> load_agent_settings(const std::filesystem::path& agent_config,
                                                  bool required) {
    if (agent_config.empty()) {
        return AgentSettings{};
    }
    auto text = util::read_file(agent_config);
    if (!text) {
        if (text.error().code() != util::ErrorCode::not_found) {
            return std::unexpected(std::move(text).error());
        }
        if (required) {
            return util::fail(util::ErrorCode::invalid_input,
                              "agent config " + agent_config.string() +
                                  " does not exist (it was given with -c/--config); create it, "
                                  "or leave out -c to use the default location");
        }
        return AgentSettings{};
    }
    const std::string file = agent_config.string();
    const toml::table root = TRY(parse_toml(*text, file));
    TableReader top(root, "the top level", file);
    TRY(top.only_keys(
        {"shim", "containerd", "systemd", "store", "health", "fetch", "kube", "metrics"}));
    return parse_agent_settings(root, file);
}

} // namespace shimkeeper::spec
