#include "shimkeeper/daemon/watch_plan.hpp"

#include <algorithm>
#include <sys/inotify.h>

namespace shimkeeper::daemon {

namespace {

constexpr std::uint32_t k_entry_events =
    IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB;
constexpr std::uint32_t k_self_events = IN_DELETE_SELF | IN_MOVE_SELF;
constexpr std::uint32_t k_always = IN_Q_OVERFLOW | IN_IGNORED | k_self_events | IN_UNMOUNT;
constexpr std::string_view k_configmap_data = "..data";

std::filesystem::path parent_of(const std::filesystem::path& normal) {
    std::filesystem::path parent = normal.parent_path();
    return parent.empty() ? std::filesystem::path(".") : parent;
}

std::filesystem::path normal_form(const std::filesystem::path& path) {
    std::filesystem::path normal = path.lexically_normal();
    // "shims.d/" normalises to "shims.d/" (an empty last element): drop it so the name is found.
    if (!normal.has_filename() && normal.has_parent_path() && normal != normal.root_path()) {
        normal = normal.parent_path();
    }
    return normal;
}

} // namespace

std::vector<DirWatch>
plan_watches(const std::vector<std::filesystem::path>& watch_paths,
             const std::function<bool(const std::filesystem::path&)>& is_directory) {
    std::vector<DirWatch> plan;
    for (const auto& raw : watch_paths) {
        std::filesystem::path path = normal_form(raw);
        if (!path.has_filename()) {
            continue; // "/" has no parent to look for it in
        }
        std::filesystem::path parent = parent_of(path);
        auto same_parent = std::find_if(plan.begin(), plan.end(), [&](const DirWatch& watch) {
            return watch.kind == WatchKind::named_entries && watch.dir == parent;
        });
        std::string name = path.filename().string();
        if (same_parent == plan.end()) {
            plan.push_back({parent, WatchKind::named_entries, {name}});
        } else if (std::find(same_parent->names.begin(), same_parent->names.end(), name) ==
                   same_parent->names.end()) {
            same_parent->names.push_back(name);
        }
    }
    for (const auto& raw : watch_paths) {
        std::filesystem::path path = normal_form(raw);
        bool planned = std::any_of(plan.begin(), plan.end(), [&](const DirWatch& watch) {
            return watch.kind == WatchKind::toml_entries && watch.dir == path;
        });
        if (!planned && is_directory(path)) {
            plan.push_back({path, WatchKind::toml_entries, {}});
        }
    }
    return plan;
}

std::uint32_t inotify_mask(WatchKind kind) {
    std::uint32_t mask = k_entry_events | IN_ONLYDIR | IN_EXCL_UNLINK;
    if (kind == WatchKind::toml_entries) {
        mask |= k_self_events;
    }
    return mask;
}

bool is_relevant(const DirWatch& watch, std::string_view name, std::uint32_t mask) {
    if ((mask & k_always) != 0) {
        return true;
    }
    if ((mask & k_entry_events) == 0) {
        return false;
    }
    if (watch.kind == WatchKind::named_entries) {
        return std::find(watch.names.begin(), watch.names.end(), name) != watch.names.end();
    }
    if (name == k_configmap_data) {
        return true;
    }
    return !name.starts_with('.') && name.size() > 5 && name.ends_with(".toml");
}

} // namespace shimkeeper::daemon
