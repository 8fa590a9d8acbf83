#include "shimkeeper/spec/desired_state.hpp"

#include "shimkeeper/spec/settings_file.hpp"
#include "shimkeeper/spec/settings_parser.hpp"
#include "shimkeeper/spec/shim_parser.hpp"
#include "shimkeeper/spec/sources.hpp"
#include "shimkeeper/spec/table_reader.hpp"
#include "shimkeeper/util/fs.hpp"

namespace shimkeeper::spec {

// toml++ (Debian builds it with exceptions on) reports syntax errors by throwing: this is
// the one place they are caught and turned into an Error.
util::Expected<toml::table> parse_toml(std::string_view text, const std::string& file) {
    try {
        return toml::parse(text, std::string_view(file));
    } catch (const toml::parse_error& error) {
        return fail_at(location_of(error.source(), file),
                       "invalid TOML: " + std::string(error.description()));
    }
}

namespace {

util::Expected<void> add_shim(DesiredState& state, ShimSpec shim) {
    TRY(check_unique(state.shims, shim));
    state.shims.push_back(std::move(shim));
    return {};
}

} // namespace

util::Expected<DesiredState> parse_desired_state_text(std::string_view text,
                                                      const std::string& file_name,
                                                      const std::string& arch,
                                                      bool allow_settings) {
    const toml::table root = TRY(parse_toml(text, file_name));
    TableReader top(root, "the top level", file_name);

    if (!allow_settings) {
        for (std::string_view key : k_agent_tables) {
            if (top.has(key)) {
                return fail_at(top.where(key),
                               "[" + std::string(key) +
                                   "] is an agent setting and belongs in shimkeeper.toml; "
                                   "files in shims.d may only hold [[shim]] entries");
            }
        }
        TRY(top.only_keys({"shim"}));
    } else {
        TRY(top.only_keys(
            {"shim", "containerd", "systemd", "store", "health", "fetch", "kube", "metrics"}));
    }

    DesiredState state;
    if (allow_settings) {
        state.settings = TRY(parse_agent_settings(root, file_name));
    }
    if (const toml::node* shims = root.get("shim")) {
        const toml::array* entries = shims->as_array();
        if (entries == nullptr || !entries->is_array_of_tables()) {
            return fail_at(location_of(shims->source(), file_name),
                           "'shim' must be an array of tables: write [[shim]] (two brackets) "
                           "before each shim");
        }
        for (const toml::node& entry : *entries) {
            ShimSpec shim = TRY(parse_shim(*entry.as_table(), file_name, arch));
            TRY(add_shim(state, std::move(shim)));
        }
    }
    state.files.push_back(file_name);
    return state;
}

util::Expected<DesiredState> load_desired_state(const LoadRequest& request) {
    DesiredState state;
    state.settings = TRY(load_agent_settings(request.agent_config, request.agent_config_required));
    FileSource files(request.agent_config, request.shims_dir, request.arch);
    DesiredShims shims = TRY(gather({&files}));
    state.shims = std::move(shims.shims);
    state.files = std::move(shims.origins);
    return state;
}

} // namespace shimkeeper::spec
