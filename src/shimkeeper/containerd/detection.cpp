#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/version_cache.hpp"

#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/node_file.hpp"
#include "shimkeeper/containerd/program.hpp"
#include "shimkeeper/util/fs.hpp"

#include <fnmatch.h>
#include <unistd.h>

namespace shimkeeper::containerd {

namespace fs = std::filesystem;

std::string_view to_string(Detection::Mode mode) {
    return mode == Detection::Mode::drop_in ? "drop-in" : "in place";
}

namespace {

bool exists_on(const util::HostRoot& root, const fs::path& node_path) {
    std::error_code ec;
    return fs::exists(root.on_host(node_path), ec);
}

Flavor pick_flavor(const util::HostRoot& root, std::vector<std::string>& reasons) {
    for (Flavor f : {Flavor::k3s, Flavor::rke2, Flavor::microk8s, Flavor::k0s}) {
        if (exists_on(root, layout(f).marker)) {
            reasons.push_back("flavor " + std::string(to_string(f)) + ": " + layout(f).marker +
                              " exists");
            return f;
        }
    }
    reasons.emplace_back("flavor containerd: no k3s, rke2, microk8s or k0s layout on disk");
    return Flavor::containerd;
}

// containerd >= 2.0 deep-merges imported plugin tables (containerd PR #9982); 1.6/1.7 replace
// a whole plugin table from an import (issue #5837), so only 2.0+ may use a drop-in, and only
// where the root config really imports it: an imports glob matching "<dir>/shimkeeper.toml".
std::optional<fs::path> imported_drop_in(const toml::table& root_config,
                                         const fs::path& config_node_path) {
    for (const auto& entry : config_imports(root_config)) {
        fs::path pattern(entry);
        if (pattern.is_relative()) {
            pattern = config_node_path.parent_path() / pattern;
        }
        std::string dir = pattern.parent_path().string();
        if (dir.find_first_of("*?[") != std::string::npos) {
            continue;
        }
        if (::fnmatch(pattern.filename().c_str(), "shimkeeper.toml", 0) == 0) {
            return pattern.parent_path() / "shimkeeper.toml";
        }
    }
    return std::nullopt;
}

std::string pick_unit(const util::HostRoot& root, Flavor flavor) {
    const auto& units = layout(flavor).units;
    for (const auto& unit : units) {
        for (const auto& dir : unit_directories()) {
            if (exists_on(root, fs::path(dir) / unit)) {
                return unit;
            }
        }
    }
    return units.empty() ? std::string() : units.front();
}

void find_binary(const util::HostRoot& root, const spec::ContainerdSettings& settings,
                 const fs::path& version_cache, const std::optional<KnownVersion>& known,
                 Detection& d) {
    std::vector<std::string> candidates = layout(d.flavor).binaries;
    if (settings.binary) {
        candidates = {*settings.binary};
    }
    for (const auto& candidate : candidates) {
        if (::access(root.on_host(candidate).c_str(), X_OK) == 0) {
            d.binary = candidate;
            break;
        }
    }
    if (known) {
        // An image root (bake): its binary is never run; the version comes from elsewhere.
        d.binary_version = known->version;
        d.reasons.push_back("containerd " + known->version.to_string() + ": " + known->source);
        return;
    }
    if (d.binary.empty()) {
        d.reasons.push_back("containerd version unknown: no executable at " + candidates.front() +
                            (candidates.size() > 1 ? " or the other usual places" : ""));
        return;
    }
    auto version = cached_containerd_version(root.on_host(d.binary), version_cache);
    if (version) {
        d.binary_version = *version;
        d.reasons.push_back("containerd " + version->to_string() + ": " + d.binary.string() +
                            " --version");
    } else {
        d.reasons.push_back("containerd version unknown: " + version.error().message());
    }
}

util::Expected<std::optional<toml::table>> read_config(const util::HostRoot& root,
                                                       const fs::path& node_path, Masking masking) {
    auto text = TRY(read_node_file(root, node_path));
    if (!text) {
        return std::optional<toml::table>();
    }
    auto masked = join_lines(mask_lines(split_lines(*text), masking));
    return std::optional<toml::table>(TRY(parse_toml(masked, node_path.string())));
}

} // namespace

util::Expected<Detection> detect(const util::HostRoot& root,
                                 const spec::ContainerdSettings& settings,
                                 const std::filesystem::path& version_cache,
                                 const std::optional<KnownVersion>& known_version) {
    Detection d;
    if (settings.flavor) {
        auto flavor = parse_flavor(*settings.flavor);
        if (!flavor) {
            return util::fail(util::ErrorCode::invalid_input,
                              "[containerd] flavor = \"" + *settings.flavor +
                                  "\" is not one of containerd, k3s, rke2, microk8s, k0s");
        }
        d.flavor = *flavor;
        d.reasons.push_back("flavor " + *settings.flavor + ": set in the agent config");
    } else {
        d.flavor = pick_flavor(root, d.reasons);
    }
    const FlavorLayout& lay = layout(d.flavor);
    d.config_path = fs::path(settings.config_path ? *settings.config_path : lay.config_path);
    d.reasons.push_back(
        "config " + d.config_path.string() +
        (settings.config_path ? ": set in the agent config" : ": the usual place for this flavor"));
    find_binary(root, settings, version_cache, known_version, d);

    auto root_config = TRY(read_config(root, d.config_path, Masking::none));
    d.config_exists = root_config.has_value();
    bool v2_binary = d.binary_version && *d.binary_version >= ContainerdVersion{2, 0, 0};
    if (root_config) {
        d.config_version = TRY(config_version(*root_config, d.config_path.string()));
        d.reasons.push_back("config version " + std::to_string(d.config_version) + ": read from " +
                            d.config_path.string());
        d.registry_config_path = registry_config_path(*root_config, d.config_version);
    } else {
        d.config_version = v2_binary ? 3 : 2;
    }

    d.target_path = d.config_path;
    if (d.flavor == Flavor::k0s) {
        d.mode = Detection::Mode::drop_in;
        d.target_path = fs::path(lay.marker) / "shimkeeper.toml";
        d.reasons.push_back("drop-in " + d.target_path.string() +
                            ": k0s merges /etc/k0s/containerd.d/*.toml itself");
    } else if (auto drop_in = v2_binary && root_config
                                  ? imported_drop_in(*root_config, d.config_path)
                                  : std::nullopt) {
        d.mode = Detection::Mode::drop_in;
        d.target_path = *drop_in;
        d.reasons.push_back("drop-in " + drop_in->string() +
                            ": containerd >= 2.0 and the root config imports it");
    } else if (d.flavor == Flavor::k3s || d.flavor == Flavor::rke2) {
        // The generated config.toml is rewritten at every start: edit the template instead.
        fs::path dir = d.config_path.parent_path();
        fs::path v3 = dir / "config-v3.toml.tmpl";
        fs::path v2 = dir / "config.toml.tmpl";
        d.target_path = exists_on(root, v3)     ? v3
                        : exists_on(root, v2)   ? v2
                        : d.config_version >= 3 ? v3
                                                : v2;
        d.masking = Masking::go_template;
        d.reasons.push_back("template " + d.target_path.string() + ": " +
                            std::string(to_string(d.flavor)) +
                            " regenerates config.toml at every start");
    } else {
        d.reasons.push_back("in place: " +
                            std::string(v2_binary ? "the root config imports no drop-in for "
                                                    "shimkeeper"
                                                  : "containerd < 2.0 (or unknown) replaces "
                                                    "whole plugin tables from imports"));
    }

    auto target = TRY(read_config(root, d.target_path, d.masking));
    d.target_exists = target.has_value();
    if (target && d.mode == Detection::Mode::in_place && target->contains("version")) {
        d.config_version = TRY(config_version(*target, d.target_path.string()));
    }
    if (!d.target_exists && d.mode == Detection::Mode::in_place && d.masking == Masking::none &&
        !d.binary.empty() && !known_version) {
        auto dump = run_program({root.on_host(d.binary).string(), "config", "default"},
                                std::chrono::seconds(20));
        if (dump && dump->exit_code == 0) {
            d.default_config = dump->output;
            if (auto parsed = parse_toml(dump->output, "containerd config default")) {
                d.config_version = TRY(config_version(*parsed, "containerd config default"));
            }
        }
    }
    d.cri_plugin = cri_plugin_id(d.config_version);
    d.runtimes_path = runtimes_path(d.config_version);

    auto socket = root_config ? configured_socket(*root_config, d.config_version) : std::nullopt;
    d.socket = settings.socket ? *settings.socket : socket ? *socket : lay.socket;
    d.unit = settings.unit ? *settings.unit : pick_unit(root, d.flavor);
    if (d.unit.empty()) {
        d.reasons.emplace_back("no restart: k0s picks up drop-ins by itself");
    }
    return d;
}

} // namespace shimkeeper::containerd
