// What the node last read from the cluster (its own Node and every Shim), kept in the store at
// <store>/state/cluster.json. An agent that starts while the API server is unreachable, or loses
// it, goes on from this: the node keeps exactly the cluster shims it had, files in shims.d/ still
// apply, and only an observed deletion or deselection ever removes a cluster shim.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::cluster::agent {

struct ClusterSnapshot {
    nlohmann::json node = nlohmann::json::object(); // this node's Node
    std::vector<nlohmann::json> shims;              // every Shim, as read
    std::string read_at;                            // RFC 3339: when this was read
    std::string unreachable_since; // RFC 3339: the first failed read since read_at; "" = none
    std::string refused_since;     // RFC 3339: the first of the refused reads (401, 403) that are
                                   // the latest failed ones; "" = none

    bool same_objects(const ClusterSnapshot& other) const;
};

// The object without what is bulky and of no use to the node (metadata.managedFields).
nlohmann::json trimmed(nlohmann::json object);

class ClusterMemory {
public:
    explicit ClusterMemory(std::filesystem::path file) : m_file(std::move(file)) {}

    const std::filesystem::path& file() const { return m_file; }
    // nullopt: nothing read yet on this node. A damaged file is an Error naming it.
    util::Expected<std::optional<ClusterSnapshot>> load() const;
    util::Expected<void> save(const ClusterSnapshot& view) const;

private:
    std::filesystem::path m_file;
};

} // namespace shimkeeper::cluster::agent
