// What every command starts from: the global options, the node root, the loaded desired state
// and the store it points at.
#pragma once

#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/architecture.hpp"
#include "shimkeeper/spec/sources.hpp"
#include "shimkeeper/store/node_lock.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/host_root.hpp"
#include "shimkeeper/util/log.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace shimkeeper::cli {

enum class OutputFormat { text, json };

struct GlobalOptions {
    std::string config; // -c: empty means <root>/etc/shimkeeper/shimkeeper.toml
    std::string root;   // --root: empty means the real node
    std::string output = "text";
    std::string log_level = "info";
    bool no_wait = false;      // --no-wait: a locked node is an error at once
    double lock_timeout = 600; // --lock-timeout SECONDS: how long to wait for the node lock
};

inline constexpr const char* k_default_agent_config = "/etc/shimkeeper/shimkeeper.toml";

// Only the agent settings are loaded up front: recovery, rollback and status need nothing else,
// so a broken shims.d/ file never keeps them from working. The desired shims are read from
// their sources by the commands that need them (load_desired).
struct Context {
    util::HostRoot root;
    util::Log log;
    OutputFormat output = OutputFormat::text;
    spec::AgentSettings settings;
    spec::FileSource files; // shimkeeper.toml's [[shim]]s and shims.d/*.toml
    std::optional<cluster::agent::ClusterSource>
        cluster; // with [kube]: the Shims selecting this node
    store::Store store;
    std::chrono::milliseconds lock_timeout{600'000}; // zero with --no-wait

    // Every source gathered (files first: they win a clash); warnings are logged. Not const:
    // the cluster source asks the API server and keeps what it read.
    util::Expected<spec::DesiredShims> load_desired();
};

// The pieces of a Context that need no file: --root made absolute, the agent config path
// (-c as given, else the default under the root), the Log.
util::HostRoot host_root_of(const GlobalOptions& options);
std::filesystem::path agent_config_of(const GlobalOptions& options, const util::HostRoot& root);
util::Log log_of(const GlobalOptions& options);

// Takes the node lock for a command that changes the node or the store, saying on stderr what
// it waits for. Read-only commands never call this.
util::Expected<store::NodeLock> lock_node(const Context& ctx, const std::string& command,
                                          std::function<void()> heartbeat = {});

// Where `containerd --version` is remembered between runs (the store's state folder).
std::filesystem::path version_cache_of(const Context& ctx);

// Loads the agent settings and opens the store; errors are bad input (exit 2) or I/O (exit 1).
util::Expected<Context> make_context(const GlobalOptions& options);

} // namespace shimkeeper::cli
