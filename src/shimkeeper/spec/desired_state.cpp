#include "shimkeeper/spec/desired_state.hpp"

#include "shimkeeper/spec/settings_parser.hpp"
#include "shimkeeper/spec/shim_parser.hpp"
#include "shimkeeper/spec/table_reader.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <system_error>

namespace shimkeeper::spec {

namespace fs = std::filesystem;

namespace {

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

// Names and handlers are unique: a name keys the store and a node label, a handler keys
// containerd's runtimes table.
util::Expected<void> add_shim(DesiredState& state, ShimSpec shim) {
    for (const ShimSpec& earlier : state.shims) {
        if (earlier.name == shim.name) {
            return fail_at(shim.location,
                           "shim name '" + shim.name + "' is already used by the [[shim]] at " +
                               earlier.location.to_string() + "; every shim needs its own name");
        }
        if (earlier.handler == shim.handler) {
            return fail_at(shim.location, "handler '" + shim.handler + "' of shim '" + shim.name +
                                              "' is already used by shim '" + earlier.name +
                                              "' at " + earlier.location.to_string() +
                                              "; containerd holds one runtime per handler");
        }
    }
    state.shims.push_back(std::move(shim));
    return {};
}

// The *.toml drop-ins of shims.d in lexical (byte) order; dot-files are ignored like editor
// and package-manager leftovers. An absent directory holds no drop-ins.
util::Expected<std::vector<fs::path>> list_drop_ins(const fs::path& dir) {
    std::vector<fs::path> files;
    if (dir.empty()) {
        return files;
    }
    std::error_code ec;
    const fs::file_status status = fs::status(dir, ec);
    if (status.type() == fs::file_type::not_found) {
        return files;
    }
    if (ec) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot inspect " + dir.string(), ec.value()));
    }
    if (!fs::is_directory(status)) {
        return util::fail(util::ErrorCode::invalid_input,
                          dir.string() + " is not a directory; shims.d must be a directory of "
                                         "*.toml drop-ins");
    }
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with('.') || it->path().extension() != ".toml") {
            continue;
        }
        if (!fs::is_regular_file(it->path(), ec)) {
            return util::fail(util::ErrorCode::invalid_input,
                              it->path().string() +
                                  " is not a regular file; every shims.d/*.toml must be a "
                                  "drop-in file (remove it or rename it)");
        }
        files.push_back(it->path());
    }
    if (ec) {
        return std::unexpected(util::Error::from_errno(util::ErrorCode::io,
                                                       "cannot list " + dir.string(), ec.value()));
    }
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    return files;
}

// A shims.d drop-in: its shims join those already loaded, names and handlers still unique.
util::Expected<void> load_file(DesiredState& state, const fs::path& path, const std::string& arch) {
    std::string text = TRY(util::read_file(path));
    DesiredState parsed = TRY(parse_desired_state_text(text, path.string(), arch, false));
    for (ShimSpec& shim : parsed.shims) {
        TRY(add_shim(state, std::move(shim)));
    }
    state.files.push_back(path.string());
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
        TRY(top.only_keys({"shim", "containerd", "systemd", "store", "health", "fetch"}));
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
    if (!request.agent_config.empty()) {
        auto text = util::read_file(request.agent_config);
        if (text) {
            DesiredState parsed = TRY(
                parse_desired_state_text(*text, request.agent_config.string(), request.arch, true));
            state = std::move(parsed);
        } else if (text.error().code() != util::ErrorCode::not_found) {
            return std::unexpected(std::move(text).error());
        }
    }
    if (state.files.empty() && request.agent_config_required) {
        return util::fail(util::ErrorCode::invalid_input,
                          "agent config " + request.agent_config.string() +
                              " does not exist (it was given with -c/--config); create it, or "
                              "leave out -c to use the default location");
    }
    for (const fs::path& drop_in : TRY(list_drop_ins(request.shims_dir))) {
        TRY(load_file(state, drop_in, request.arch));
    }
    return state;
}

} // namespace shimkeeper::spec
