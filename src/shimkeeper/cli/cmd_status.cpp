// `shimkeeper status`: what the store holds, the generations, which one is current, the cluster
// as this node sees it, and what the daemon last said (status_daemon.hpp).
#include "shimkeeper/cli/commands.hpp"
#include "shimkeeper/cli/format.hpp"
#include "shimkeeper/cli/oci_source.hpp"
#include "shimkeeper/cli/status_cluster.hpp"
#include "shimkeeper/cli/status_daemon.hpp"
#include "shimkeeper/cli/status_node.hpp"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

namespace shimkeeper::cli {

namespace {

std::uint64_t directory_size(const std::filesystem::path& dir) {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) {
            total += it->file_size(ec);
        }
    }
    return total;
}

nlohmann::json shim_json(const store::InstalledShim& s) {
    return {{"name", s.name},
            {"handler", s.handler},
            {"runtime_type", s.runtime_type},
            {"binary", s.binary},
            {"version", s.version},
            {"digest", s.digest},
            {"url", s.url},
            {"allow_unverified", s.allow_unverified},
            {"adopt", s.adopt},
            {"runtime_class", s.runtime_class},
            {"origin", s.origin},
            {"runtime_type_derivation", s.runtime_type_derivation.empty()
                                            ? nlohmann::json(nullptr)
                                            : nlohmann::json(s.runtime_type_derivation)}};
}

// Which shims of which generations use a digest: "demo (gen 3, 4)".
std::vector<std::string> users_of(const store::StoreState& state, const std::string& digest) {
    std::vector<std::string> users;
    for (const auto& gen : state.generations) {
        for (const auto& shim : gen.shims) {
            if (shim.digest == digest) {
                users.push_back(shim.name + "@" + std::to_string(gen.number));
            }
        }
    }
    return users;
}

util::Expected<int> show_status(Context& ctx, const std::filesystem::path& daemon_status_file) {
    auto state = TRY(ctx.store.load_state());
    const store::Generation* current = state.current_generation();

    nlohmann::json artifacts = nlohmann::json::array();
    for (const std::string& digest : ctx.store.artifact_digests()) {
        artifacts.push_back({{"digest", digest},
                             {"bytes", directory_size(ctx.store.artifact_dir(digest))},
                             {"used_by", users_of(state, digest)}});
    }
    nlohmann::json generations = nlohmann::json::array();
    for (const auto& gen : state.generations) {
        nlohmann::json shims = nlohmann::json::array();
        for (const auto& shim : gen.shims) {
            shims.push_back(shim_json(shim));
        }
        generations.push_back({{"number", gen.number},
                               {"created", gen.created},
                               {"current", current == &gen},
                               {"shims", shims}});
    }
    // A broken desired-state file is reported, not a reason to show nothing else.
    auto loaded = ctx.load_desired();
    const std::vector<spec::ShimSpec> no_shims;
    const std::vector<spec::ShimSpec>& desired_shims = loaded ? loaded->shims : no_shims;
    nlohmann::json desired = nlohmann::json::array();
    for (const auto& shim : desired_shims) {
        desired.push_back(
            {{"name", shim.name},
             {"handler", shim.handler},
             {"version", shim.version},
             {"source", shim.location.to_string()},
             {"runtime_type", shim.runtime_type},
             {"runtime_type_derivation", shim.runtime_type_derivation.empty()
                                             ? nlohmann::json(nullptr)
                                             : nlohmann::json(shim.runtime_type_derivation)},
             {"oci", oci_source_json(shim.fetch, ctx.store)}});
    }
    const nlohmann::json desired_error =
        loaded ? nlohmann::json(nullptr) : nlohmann::json(loaded.error().message());

    if (ctx.output == OutputFormat::json) {
        nlohmann::json out{{"store", ctx.store.node_dir().string()},
                           {"artifacts", artifacts},
                           {"generations", generations},
                           {"current_generation",
                            current ? nlohmann::json(current->number) : nlohmann::json(nullptr)},
                           {"desired", desired},
                           {"desired_error", desired_error},
                           {"cluster", cluster_status_json(ctx, loaded)},
                           {"daemon", daemon_status_json(daemon_status_file)}};
        out.update(node_status(ctx, desired_shims, loaded ? DesiredKnown::yes : DesiredKnown::no));
        std::cout << out.dump(2) << "\n";
        return 0;
    }

    if (!loaded) {
        std::cout << "Desired shims: unreadable: " << loaded.error().message()
                  << "\n  (apply and the daemon refuse to change the node until it is fixed)\n";
    } else {
        std::cout << "Desired shims: " << loaded->shims.size() << " (from "
                  << loaded->origins.size() << " file(s))\n";
    }
    for (const auto& shim : desired_shims) {
        std::cout << "  " << shim.name << "  handler " << shim.handler << "  "
                  << (shim.version.empty() ? "" : shim.version + "  ") << shim.location.to_string()
                  << "\n";
        if (!shim.runtime_type_derivation.empty()) {
            std::cout << "    runtime type " << shim.runtime_type << ", "
                      << shim.runtime_type_derivation << "\n";
        }
        for (const auto& line : oci_source_lines(shim.fetch, ctx.store)) {
            std::cout << "    " << line << "\n";
        }
    }
    if (current) {
        std::cout << "Current generation: " << current->number << " (" << current->created << ")\n";
        for (const auto& shim : current->shims) {
            std::cout << "  " << shim.name << "  handler " << shim.handler << "  " << shim.version
                      << "  " << short_digest(shim.digest) << "\n";
            if (!shim.runtime_type_derivation.empty()) {
                std::cout << "    runtime type " << shim.runtime_type << ", "
                          << shim.runtime_type_derivation << "\n";
            }
        }
    } else {
        std::cout << "Current generation: none (nothing installed yet)\n";
    }
    std::cout << "Store artifacts: " << artifacts.size() << "\n";
    for (const auto& a : artifacts) {
        auto users = a["used_by"].get<std::vector<std::string>>();
        std::string used;
        for (const auto& u : users) {
            used += (used.empty() ? "" : ", ") + u;
        }
        std::cout << "  " << short_digest(a["digest"].get<std::string>()) << "  "
                  << human_size(a["bytes"].get<std::uint64_t>()) << "  "
                  << (users.empty() ? "staged, not installed" : "used by " + used) << "\n";
    }
    print_cluster_status(cluster_status_json(ctx, loaded));
    print_node_status(
        node_status(ctx, desired_shims, loaded ? DesiredKnown::yes : DesiredKnown::no));
    print_daemon_status(daemon_status_json(daemon_status_file));
    return 0;
}

} // namespace

int run_status_command(const GlobalOptions& options, const std::string& daemon_status_file) {
    const std::filesystem::path file = host_root_of(options).on_host(daemon_status_file);
    return run_with_context(options, [&file](Context& ctx) { return show_status(ctx, file); });
}

} // namespace shimkeeper::cli
