#include "shimkeeper/containerd/plan.hpp"

#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/edit_check.hpp"
#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/containerd/node_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/sha256.hpp"

namespace shimkeeper::containerd {

namespace {

util::Expected<std::optional<std::string>> read_optional(const util::HostRoot& root,
                                                         const std::filesystem::path& node_path) {
    return read_node_file(root, node_path);
}

std::string sha256_hex(std::string_view text) {
    util::Sha256 hash;
    hash.update(text);
    return hash.finish_hex();
}

// What a missing target is created from (DESIGN.md): a k3s/rke2 template renders the base
// template first; a drop-in holds only its version (the root's); a root config is what
// `containerd config default` printed, or a minimal one of the right version.
std::string base_for_missing(const Detection& d) {
    if (d.masking == Masking::go_template) {
        return "{{ template \"base\" . }}\n";
    }
    if (d.mode == Detection::Mode::drop_in) {
        return "version = " + std::to_string(d.config_version) + "\n";
    }
    if (d.default_config) {
        return *d.default_config;
    }
    return minimal_config(d.config_version);
}

// Deletes a file shimkeeper created once its last block is gone and the rest is untouched.
std::optional<std::string> restore_absence(std::string after, Masking masking) {
    auto lines = split_lines(after);
    auto base_hash = created_base_hash(lines);
    auto blocks = find_blocks(lines, "", masking);
    if (!base_hash || !blocks || !blocks->empty()) {
        return after;
    }
    lines.erase(lines.begin());
    if (sha256_hex(join_lines(lines)) == *base_hash) {
        return std::nullopt;
    }
    return after;
}

util::Expected<void> check_version_supported(const Detection& d) {
    // containerd 1.6.32+/1.7.17+ refuse a config version above 2; older 1.x misread it.
    if (d.config_version > 2 && d.binary_version &&
        *d.binary_version < ContainerdVersion{2, 0, 0}) {
        return util::fail(util::ErrorCode::conflict,
                          d.config_path.string() + " has version " +
                              std::to_string(d.config_version) + " but containerd is " +
                              d.binary_version->to_string() +
                              ", which reads versions 1 and 2 only; fix the config first");
    }
    return {};
}

} // namespace

util::Expected<std::vector<FileChange>> plan_edits(const Detection& detection,
                                                   const std::vector<DesiredRuntime>& desired,
                                                   const util::HostRoot& root) {
    TRY(check_version_supported(detection));
    std::vector<FileChange> changes;
    auto before = TRY(read_optional(root, detection.target_path));

    EditTarget target;
    target.label = detection.target_path.string();
    target.runtimes_path = detection.runtimes_path;
    target.masking = detection.masking;
    target.pointing = choose_pointing(detection.binary_version);

    std::optional<toml::table> root_config;
    std::optional<std::string> root_text;
    if (detection.mode == Detection::Mode::drop_in) {
        target.drop_in = true;
        root_text = TRY(read_optional(root, detection.config_path));
        if (root_text) {
            // Only the user's own content counts: blocks there are shimkeeper's, and stale. The
            // root config a drop-in joins is plain TOML, never a template.
            root_config =
                TRY(parse_toml(join_lines(user_lines(split_lines(*root_text), Masking::none)),
                               detection.config_path.string()));
            target.root_config = &*root_config;
        }
        if (before) {
            auto own = TRY(parse_toml(*before, target.label));
            int version = TRY(config_version(own, target.label));
            if (version != detection.config_version) {
                return util::fail(util::ErrorCode::conflict,
                                  target.label + " has version " + std::to_string(version) +
                                      " but the root config has " +
                                      std::to_string(detection.config_version) +
                                      "; a drop-in must use the root's version: fix one of them");
            }
        }
    }

    std::string start = before.value_or("");
    if (!before) {
        if (desired.empty()) {
            return changes;
        }
        std::string base = base_for_missing(detection);
        start = created_marker(sha256_hex(base)) + "\n" + base;
    }
    std::string edited = TRY(edit_config_text(start, target, desired));
    std::optional<std::string> after = restore_absence(edited, target.masking);
    if (after != before) {
        bool created = created_base_hash(split_lines(after.value_or(start))).has_value();
        changes.push_back({detection.target_path, before, after, created});
    }

    // A node that moved to a drop-in (containerd upgraded to 2.x) may still hold blocks in the
    // root config: remove them there, or the handler would be defined twice.
    auto root_blocks = find_blocks(split_lines(root_text.value_or("")), "", Masking::none);
    if (root_text && (!root_blocks || !root_blocks->empty())) {
        EditTarget root_target = target;
        root_target.label = detection.config_path.string();
        root_target.root_config = nullptr;
        root_target.drop_in = false;
        auto cleaned = TRY(edit_config_text(*root_text, root_target, {}));
        if (cleaned != *root_text) {
            changes.push_back({detection.config_path, root_text, cleaned, false});
        }
    }
    return changes;
}

bool needs_restart(const Detection& detection, const std::vector<FileChange>& changes) {
    return !changes.empty() && !detection.unit.empty();
}

} // namespace shimkeeper::containerd
