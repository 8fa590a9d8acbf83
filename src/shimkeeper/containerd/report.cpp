#include "shimkeeper/containerd/report.hpp"

#include "shimkeeper/containerd/diff.hpp"

namespace shimkeeper::containerd {

nlohmann::json detection_json(const Detection& d) {
    nlohmann::json out;
    out["flavor"] = std::string(to_string(d.flavor));
    out["config_path"] = d.config_path.string();
    out["config_exists"] = d.config_exists;
    out["target_path"] = d.target_path.string();
    out["target_exists"] = d.target_exists;
    out["mode"] = d.mode == Detection::Mode::drop_in ? "drop-in" : "in-place";
    out["template"] = d.masking == Masking::go_template;
    out["config_version"] = d.config_version;
    out["cri_plugin"] = d.cri_plugin;
    out["binary"] = d.binary.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.binary.string());
    out["binary_version"] =
        d.binary_version ? nlohmann::json(d.binary_version->to_string()) : nlohmann::json(nullptr);
    out["socket"] = d.socket;
    out["unit"] = d.unit.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.unit);
    out["reasons"] = d.reasons;
    return out;
}

nlohmann::json plan_json(const Detection& detection, const std::vector<FileChange>& changes) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& change : changes) {
        std::string action = !change.before ? "create" : !change.after ? "remove" : "modify";
        files.push_back({{"path", change.node_path.string()},
                         {"action", action},
                         {"created_by_shimkeeper", change.created_by_shimkeeper},
                         {"diff", unified_diff(change)}});
    }
    return {{"files", files}, {"restart_needed", needs_restart(detection, changes)}};
}

} // namespace shimkeeper::containerd
