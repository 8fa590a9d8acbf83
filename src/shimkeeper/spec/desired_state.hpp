// The desired-state loader: shimkeeper.toml plus every shims.d/*.toml, validated in full
// before anything on the node is touched. Every error reads "<file>:<line>:<column>: <message>".
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/spec/architecture.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::spec {

struct DesiredState {
    AgentSettings settings;
    std::vector<ShimSpec> shims;    // in load order
    std::vector<std::string> files; // every file read, in order
};

struct LoadRequest {
    std::filesystem::path agent_config; // path this process opens (already prefixed by --root)
    std::filesystem::path shims_dir;    // likewise: the shims.d/ beside agent_config
    bool agent_config_required = false; // true when the user passed -c FILE explicitly
    std::string arch;                   // this node's architecture, normalised: "amd64", "arm64"
};

// Settings plus the file source, gathered and validated (sources.hpp); commands use the parts on
// their own, tests and tools the whole.
// Reads the agent config (absent is fine unless required) and every shims.d/*.toml in lexical
// order (other names and dot-files are ignored; an absent shims.d is fine). Names and handlers
// must be unique across all files.
util::Expected<DesiredState> load_desired_state(const LoadRequest& request);

// Parses one file's text. allow_settings=false for shims.d files: the agent tables
// ([containerd], [systemd], [store], [health], [fetch]) belong in shimkeeper.toml only.
util::Expected<DesiredState> parse_desired_state_text(std::string_view text,
                                                      const std::string& file_name,
                                                      const std::string& arch, bool allow_settings);

// toml++'s parse with its syntax errors turned into "<file>:<line>:<column>: invalid TOML: ...".
util::Expected<toml::table> parse_toml(std::string_view text, const std::string& file);

} // namespace shimkeeper::spec
