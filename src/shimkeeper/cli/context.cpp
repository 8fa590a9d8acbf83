#include "shimkeeper/cli/context.hpp"

#include "shimkeeper/spec/settings_file.hpp"

namespace shimkeeper::cli {

util::HostRoot host_root_of(const GlobalOptions& options) {
    // Absolute, so that paths handed to child processes (the pre-flight exec) resolve anywhere.
    return util::HostRoot{options.root.empty() ? std::filesystem::path()
                                               : std::filesystem::absolute(options.root)};
}

std::filesystem::path agent_config_of(const GlobalOptions& options, const util::HostRoot& root) {
    // -c FILE is a path of this process (not prefixed); shims.d/ sits beside it.
    return options.config.empty() ? root.on_host(k_default_agent_config)
                                  : std::filesystem::path(options.config);
}

util::Log log_of(const GlobalOptions& options) {
    util::LogLevel level = util::LogLevel::info;
    util::parse_log_level(options.log_level, level); // CLI11 already checked the value
    return util::Log(level);
}

util::Expected<spec::DesiredShims> Context::load_desired() {
    std::vector<spec::DesiredSource*> sources{&files};
    if (cluster) {
        sources.push_back(&*cluster);
    }
    auto desired = TRY(spec::gather(sources));
    for (const auto& warning : desired.warnings) {
        log.warning(warning);
    }
    return desired;
}

util::Expected<store::NodeLock> lock_node(const Context& ctx, const std::string& command,
                                          std::function<void()> heartbeat) {
    store::LockWait wait;
    wait.timeout = ctx.lock_timeout;
    wait.heartbeat = std::move(heartbeat);
    wait.on_wait = [&ctx](const std::optional<store::LockHolder>& holder) {
        ctx.log.warning("waiting for the node lock, held by " +
                        (holder ? holder->describe() : std::string("another shimkeeper run")) +
                        " (--lock-timeout " +
                        std::to_string(static_cast<long>(ctx.lock_timeout.count() / 1000)) +
                        " s; --no-wait to fail at once)");
    };
    return store::NodeLock::acquire(ctx.store, command, wait);
}

std::filesystem::path version_cache_of(const Context& ctx) {
    return ctx.store.state_dir() / "containerd-version";
}

util::Expected<Context> make_context(const GlobalOptions& options) {
    OutputFormat output = OutputFormat::text;
    if (options.output == "json") {
        output = OutputFormat::json;
    } else if (options.output != "text") {
        return util::fail(util::ErrorCode::invalid_input,
                          "-o '" + options.output + "' is not one of text, json");
    }
    util::HostRoot root = host_root_of(options);
    if (!options.root.empty() && !std::filesystem::is_directory(options.root)) {
        return util::fail(util::ErrorCode::invalid_input,
                          "--root " + options.root + " is not a directory");
    }

    const std::filesystem::path agent_config = agent_config_of(options, root);
    auto settings = TRY(spec::load_agent_settings(agent_config, !options.config.empty()));
    spec::FileSource files(agent_config, agent_config.parent_path() / "shims.d",
                           spec::node_architecture());
    store::Store store(root, settings.store.dir);
    std::optional<cluster::agent::ClusterSource> cluster;
    if (settings.kube) {
        cluster.emplace(
            *settings.kube, spec::node_architecture(),
            cluster::agent::ClusterPlaces{store.state_dir() / "cluster.json",
                                          root.on_host("/etc/machine-id"),
                                          {root.on_host("/var/lib/kubelet/kubeconfig"),
                                           root.on_host("/etc/kubernetes/kubelet.conf")}});
    }
    const auto lock_timeout =
        options.no_wait ? std::chrono::milliseconds(0)
                        : std::chrono::milliseconds(static_cast<long>(options.lock_timeout * 1000));
    return Context{root,
                   log_of(options),
                   output,
                   std::move(settings),
                   std::move(files),
                   std::move(cluster),
                   std::move(store),
                   lock_timeout};
}

} // namespace shimkeeper::cli
