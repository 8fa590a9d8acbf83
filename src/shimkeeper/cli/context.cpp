#include "shimkeeper/cli/context.hpp"

namespace shimkeeper::cli {

util::Expected<Context> make_context(const GlobalOptions& options) {
    util::LogLevel level{};
    if (!util::parse_log_level(options.log_level, level)) {
        return util::fail(util::ErrorCode::invalid_input,
                          "--log-level '" + options.log_level +
                              "' is not one of debug, info, warning, error");
    }
    OutputFormat output = OutputFormat::text;
    if (options.output == "json") {
        output = OutputFormat::json;
    } else if (options.output != "text") {
        return util::fail(util::ErrorCode::invalid_input,
                          "-o '" + options.output + "' is not one of text, json");
    }
    util::HostRoot root{std::filesystem::path(options.root)};
    if (!options.root.empty() && !std::filesystem::is_directory(options.root)) {
        return util::fail(util::ErrorCode::invalid_input,
                          "--root " + options.root + " is not a directory");
    }

    // -c FILE is a path of this process (not prefixed); shims.d/ sits beside it.
    spec::LoadRequest request;
    request.agent_config_required = !options.config.empty();
    request.agent_config = options.config.empty() ? root.on_host(k_default_agent_config)
                                                  : std::filesystem::path(options.config);
    request.shims_dir = request.agent_config.parent_path() / "shims.d";
    request.arch = spec::node_architecture();
    auto desired = TRY(spec::load_desired_state(request));

    store::Store store(root, desired.settings.store.dir);
    return Context{root, util::Log(level), output, std::move(desired), std::move(store)};
}

} // namespace shimkeeper::cli
