#include "shimkeeper/cluster/agent/cluster_memory.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

namespace shimkeeper::cluster::agent {

namespace {

using nlohmann::json;

util::Error damaged(const std::filesystem::path& file, const std::string& what) {
    return util::Error(util::ErrorCode::io,
                       file.string() + " is damaged (" + what +
                           "): remove it; the agent reads the cluster again when it can");
}

} // namespace

bool ClusterSnapshot::same_objects(const ClusterSnapshot& other) const {
    return node == other.node && shims == other.shims;
}

json trimmed(json object) {
    if (object.is_object() && object.contains("metadata") && object["metadata"].is_object()) {
        object["metadata"].erase("managedFields");
    }
    return object;
}

util::Expected<std::optional<ClusterSnapshot>> ClusterMemory::load() const {
    std::error_code ec;
    if (!std::filesystem::exists(m_file, ec)) {
        return std::nullopt;
    }
    const std::string text = TRY(util::read_file(m_file));
    const json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_object() || !parsed.contains("node") || !parsed["node"].is_object() ||
        !parsed.contains("shims") || !parsed["shims"].is_array()) {
        return std::unexpected(damaged(m_file, "expected an object with node and shims"));
    }
    ClusterSnapshot view;
    view.node = parsed["node"];
    for (const json& shim : parsed["shims"]) {
        view.shims.push_back(shim);
    }
    view.read_at = parsed.value("read_at", std::string());
    view.unreachable_since = parsed.value("unreachable_since", std::string());
    view.refused_since = parsed.value("refused_since", std::string());
    return view;
}

util::Expected<void> ClusterMemory::save(const ClusterSnapshot& view) const {
    json out{{"node", view.node},
             {"shims", view.shims},
             {"read_at", view.read_at},
             {"unreachable_since", view.unreachable_since},
             {"refused_since", view.refused_since}};
    TRY(util::create_directories(m_file.parent_path()));
    return util::write_file_atomic(m_file, out.dump(1) + "\n", 0600);
}

} // namespace shimkeeper::cluster::agent
