#include "shimkeeper/cli/status_node.hpp"

#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/containerd/report.hpp"
#include "shimkeeper/health/containerd_client.hpp"
#include "shimkeeper/health/evaluate.hpp"
#include "shimkeeper/reconcile/journal.hpp"
#include "shimkeeper/reconcile/removal_guard.hpp"
#include "shimkeeper/util/symlink_chain.hpp"

#include <iostream>

namespace shimkeeper::cli {

namespace {

constexpr std::chrono::seconds k_probe_timeout{2};

// What the running containerd says about every desired handler.
nlohmann::json running_json(const Context& ctx, const std::vector<spec::ShimSpec>& desired,
                            DesiredKnown known, const containerd::Detection& d) {
    auto client = health::make_containerd_client(ctx.root.on_host(d.socket).string());
    auto version = client->version(k_probe_timeout);
    if (!version) {
        return {{"reachable", false}, {"error", version.error().message()}};
    }
    nlohmann::json running{{"reachable", true}, {"version", *version}};
    auto status = client->cri_status(k_probe_timeout);
    if (!status) {
        running["cri_error"] = status.error().message();
        return running;
    }
    running["runtime_ready"] = status->runtime_ready;
    nlohmann::json handlers = nlohmann::json::object();
    for (const auto& shim : desired) {
        const std::string expected = ctx.store.binary_node_path(shim.binary).string();
        std::string actual;
        bool registered = false;
        for (const auto& handler : status->handlers) {
            if (handler.name == shim.handler) {
                registered = true;
                actual = health::effective_binary(handler);
            }
        }
        handlers[shim.handler] = {{"registered", registered},
                                  {"binary", actual},
                                  {"as_desired", registered && actual == expected}};
    }
    running["handlers"] = handlers;
    // What apply and the daemon would hold back (removal_guard.hpp), asked the same way.
    nlohmann::json blocked = nlohmann::json::object();
    auto state = ctx.store.load_state();
    if (known == DesiredKnown::yes && state) {
        auto pods = client->pod_sandboxes(k_probe_timeout);
        if (!pods) {
            running["pods_error"] = pods.error().message();
        } else {
            for (const auto& [name, removal] :
                 reconcile::blocked_removals(desired, *state, *pods)) {
                blocked[name] = removal.reason;
            }
        }
    }
    running["blocked_removals"] = blocked;
    return running;
}

nlohmann::json last_transaction_json(const Context& ctx) {
    auto entry = reconcile::Journal(ctx.store.state_dir()).load();
    if (!entry) {
        return {{"error", entry.error().message()}};
    }
    if (!*entry) {
        return nullptr;
    }
    const auto& e = **entry;
    return {{"id", e.id},         {"kind", e.kind},         {"result", to_string(e.result)},
            {"reason", e.reason}, {"started", e.started},   {"finished", e.finished},
            {"steps", e.steps},   {"restarts", e.restarts}, {"to_generation", e.to_generation}};
}

} // namespace

nlohmann::json node_status(const Context& ctx, const std::vector<spec::ShimSpec>& desired,
                           DesiredKnown known) {
    nlohmann::json out;
    auto detection = containerd::detect(ctx.root, ctx.settings.containerd);
    if (!detection) {
        out["containerd"] = {{"error", detection.error().message()}};
    } else {
        out["containerd"] = containerd::detection_json(*detection);
        // A config that is a symlink is edited at the end of its chain: say where that is.
        nlohmann::json links = nlohmann::json::object();
        for (const auto& path : {detection->config_path, detection->target_path}) {
            auto resolved = util::resolve_symlinks(ctx.root, path);
            if (!resolved) {
                links[path.string()] = {{"error", resolved.error().message()}};
            } else if (!resolved->through.empty()) {
                links[path.string()] = resolved->node_path.string();
            }
        }
        out["containerd"]["symlinks"] = links;
        // Under --root (an image being baked) nothing runs: do not ask the host's containerd.
        out["running"] = ctx.root.is_host() ? running_json(ctx, desired, known, *detection)
                                            : nlohmann::json{{"reachable", false},
                                                             {"error", "not asked under --root"}};
    }
    out["last_transaction"] = last_transaction_json(ctx);
    return out;
}

void print_node_status(const nlohmann::json& s) {
    const auto& c = s["containerd"];
    if (c.contains("error")) {
        std::cout << "containerd: cannot detect: " << c["error"].get<std::string>() << "\n";
    } else {
        std::cout << "containerd: flavor " << c["flavor"].get<std::string>() << ", config version "
                  << c["config_version"].get<int>() << ", edits "
                  << c["target_path"].get<std::string>() << " (" << c["mode"].get<std::string>()
                  << "), unit " << (c["unit"].is_null() ? "none" : c["unit"].get<std::string>())
                  << ", socket " << c["socket"].get<std::string>() << "\n";
        for (const auto& reason : c["reasons"]) {
            std::cout << "  because " << reason.get<std::string>() << "\n";
        }
        for (const auto& [path, target] : c["symlinks"].items()) {
            std::cout << "config: " << path << " \u2192 "
                      << (target.is_string() ? target.get<std::string>()
                                             : "unusable: " + target["error"].get<std::string>())
                      << "\n";
        }
        const auto& r = s["running"];
        if (!r["reachable"].get<bool>()) {
            std::cout << "Running containerd: not reachable (" << r["error"].get<std::string>()
                      << ")\n";
        } else if (r.contains("cri_error")) {
            std::cout << "Running containerd " << r["version"].get<std::string>()
                      << ": CRI does not answer: " << r["cri_error"].get<std::string>() << "\n";
        } else {
            std::cout << "Running containerd " << r["version"].get<std::string>()
                      << ": RuntimeReady=" << (r["runtime_ready"].get<bool>() ? "true" : "false")
                      << "\n";
            for (const auto& [handler, h] : r["handlers"].items()) {
                std::cout << "  handler " << handler << ": "
                          << (!h["registered"].get<bool>() ? "NOT registered"
                              : h["as_desired"].get<bool>()
                                  ? "registered -> " + h["binary"].get<std::string>()
                                  : "registered but points at " + h["binary"].get<std::string>())
                          << "\n";
            }
            for (const auto& [name, reason] : r["blocked_removals"].items()) {
                std::cout << "  removal of " << name << " waits: " << reason.get<std::string>()
                          << "\n";
            }
        }
    }
    const auto& t = s["last_transaction"];
    if (t.is_null()) {
        std::cout << "Last transaction: none\n";
    } else if (t.contains("error")) {
        std::cout << "Last transaction: unreadable: " << t["error"].get<std::string>() << "\n";
    } else {
        std::cout << "Last transaction: " << t["kind"].get<std::string>() << " "
                  << t["id"].get<std::string>() << " " << t["result"].get<std::string>()
                  << " (started " << t["started"].get<std::string>() << ", "
                  << t["restarts"].get<int>() << " containerd restart(s))";
        if (!t["reason"].get<std::string>().empty()) {
            std::cout << ": " << t["reason"].get<std::string>();
        }
        std::cout << "\n";
    }
}

} // namespace shimkeeper::cli
