// The data behind `status` (what was detected and why) and `plan -o json` (each file change
// with its diff), as JSON.
#pragma once

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/plan.hpp"

#include <nlohmann/json.hpp>
#include <vector>

namespace shimkeeper::containerd {

nlohmann::json detection_json(const Detection& detection);

// {"path", "action": "create|modify|remove", "created_by_shimkeeper", "diff"} per change, plus
// whether containerd needs a restart.
nlohmann::json plan_json(const Detection& detection, const std::vector<FileChange>& changes);

} // namespace shimkeeper::containerd
