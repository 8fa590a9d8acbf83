#include "shimkeeper/archive/entry_path.hpp"

#include <climits>
#include <vector>

namespace shimkeeper::archive {

namespace {

constexpr std::size_t k_max_component = NAME_MAX;
constexpr std::size_t k_max_path = PATH_MAX - 1;

std::vector<std::string_view> split(std::string_view path) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t slash = path.find('/', start);
        if (slash == std::string_view::npos) {
            slash = path.size();
        }
        parts.push_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    return parts;
}

util::Expected<std::string> refuse(std::string_view raw, const std::string& why) {
    return util::fail(util::ErrorCode::archive, "entry '" + std::string(raw) + "' " + why);
}

} // namespace

util::Expected<std::string> checked_entry_path(std::string_view raw) {
    if (raw.empty()) {
        return util::fail(util::ErrorCode::archive, "an entry has an empty path");
    }
    for (char c : raw) {
        if (c == '\0') {
            return refuse(raw, "holds a NUL byte");
        }
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return refuse(raw, "holds a control character");
        }
    }
    if (raw.size() > k_max_path) {
        return refuse(raw.substr(0, 64), "... is longer than PATH_MAX");
    }
    if (raw.front() == '/') {
        return refuse(raw, "is an absolute path");
    }
    std::string normalised;
    for (std::string_view part : split(raw)) {
        if (part.empty() || part == ".") {
            continue;
        }
        if (part == "..") {
            return refuse(raw, "escapes the archive root (it contains '..')");
        }
        if (part.size() > k_max_component) {
            return refuse(raw, "has a component longer than NAME_MAX");
        }
        if (!normalised.empty()) {
            normalised += '/';
        }
        normalised += part;
    }
    if (normalised.empty()) {
        return std::string(".");
    }
    return normalised;
}

std::string symlink_target_problem(std::string_view link_path, std::string_view target) {
    const std::string quoted =
        "symlink '" + std::string(link_path) + "' -> '" + std::string(target) + "'";
    if (target.empty()) {
        return quoted + " has an empty target";
    }
    if (target.front() == '/') {
        return quoted + " points to an absolute path outside the archive root";
    }
    if (target.find('\0') != std::string_view::npos) {
        return quoted + " has a NUL byte in its target";
    }
    // Depth of the directory holding the link: "a/b/link" lives two levels below the root.
    std::size_t depth = 0;
    for (char c : link_path) {
        depth += c == '/' ? 1 : 0;
    }
    bool seen_name = false;
    std::size_t climbs = 0;
    for (std::string_view part : split(target)) {
        if (part.empty() || part == ".") {
            continue;
        }
        if (part == "..") {
            if (seen_name) {
                return quoted + " uses '..' after a directory name; only leading '..' is allowed";
            }
            ++climbs;
            if (climbs > depth) {
                return quoted + " escapes the archive root";
            }
            continue;
        }
        seen_name = true;
    }
    return {};
}

} // namespace shimkeeper::archive
