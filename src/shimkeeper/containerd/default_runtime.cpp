#include "shimkeeper/containerd/default_runtime.hpp"

#include "shimkeeper/containerd/edit_check.hpp"
#include "shimkeeper/containerd/toml_tree.hpp"

namespace shimkeeper::containerd {

bool needs_default_runtime(const std::vector<std::string>& lines, const EditTarget& target,
                           const std::vector<DesiredRuntime>& desired) {
    if (desired.empty() || target.drop_in || target.root_config != nullptr) {
        return false;
    }
    for (const auto& runtime : desired) {
        if (runtime.handler == "runc") {
            return false;
        }
    }
    auto user = user_lines(lines, target.masking);
    if (target.masking == Masking::go_template) {
        for (const auto& line : user) {
            if (line.find("{{") != std::string::npos &&
                line.find("template") != std::string::npos) {
                return false;
            }
        }
    }
    auto tree = parse_toml(join_lines(mask_lines(user, target.masking)), target.label);
    if (!tree) {
        return false;
    }
    KeyPath containerd_path(target.runtimes_path.begin(), target.runtimes_path.end() - 1);
    const toml::table* containerd = find_table(*tree, containerd_path);
    std::string name = "runc";
    if (containerd != nullptr) {
        if (containerd->contains("default_runtime")) {
            return false; // version 1's own default runtime entry
        }
        if (const auto* configured = containerd->get("default_runtime_name")) {
            name = configured->value_or(std::string("runc"));
        }
    }
    KeyPath runc_path = target.runtimes_path;
    runc_path.push_back("runc");
    return name == "runc" && find_node(*tree, runc_path) == nullptr;
}

} // namespace shimkeeper::containerd
