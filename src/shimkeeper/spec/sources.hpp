// Desired-state sources: where the shims a node should run come from. Today the files
// (`[[shim]]` entries of shimkeeper.toml and every shims.d/*.toml); in cluster mode also the Shim
// objects that select this node. Each source yields validated ShimSpecs whose `location` names
// their origin ("shims.d/spin.toml:3:1", or an object and its resourceVersion); `gather` joins
// them and runs the one set-level validation for all sources together.
//
// The agent settings are loaded apart (settings_file.hpp): recovery, rollback and status need
// only those, so a broken drop-in never keeps them from working.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace shimkeeper::spec {

struct DesiredShims {
    std::vector<ShimSpec> shims;       // in source order, then load order within a source
    std::vector<std::string> origins;  // every file or object read, in order
    std::vector<std::string> warnings; // what was left out and why (a Shim that clashes, ...)
};

class DesiredSource {
public:
    virtual ~DesiredSource() = default;
    // Reads the source afresh. Not const: a source may send requests and keep what it read (the
    // cluster's memory for outages). An error names the file:line:column or the object.
    virtual util::Expected<DesiredShims> load() = 0;
    // True for cluster objects: where one clashes with a shim of an earlier source (a file), the
    // node's own file wins and the object is left out with a warning instead of an error.
    virtual bool yields_on_conflict() const { return false; }
};

// The [[shim]] entries of the agent config file and of every shims.d/*.toml (lexical order).
class FileSource : public DesiredSource {
public:
    FileSource(std::filesystem::path agent_config, std::filesystem::path shims_dir,
               std::string arch)
        : m_agent_config(std::move(agent_config)), m_shims_dir(std::move(shims_dir)),
          m_arch(std::move(arch)) {}

    util::Expected<DesiredShims> load() override;

private:
    std::filesystem::path m_agent_config; // may be absent
    std::filesystem::path m_shims_dir;    // may be absent
    std::string m_arch;
};

// Names, handlers and binaries are unique across everything the node runs: a name keys the store
// and a node label, a handler keys containerd's runtimes table, a binary names the bin/ link.
// Returns the error for `shim` when it clashes with one of `earlier`.
util::Expected<void> check_unique(const std::vector<ShimSpec>& earlier, const ShimSpec& shim);

// Loads every source in order and validates the set as a whole.
util::Expected<DesiredShims> gather(const std::vector<DesiredSource*>& sources);

} // namespace shimkeeper::spec
