// kube-probe: shimkeeper's Kubernetes client from the command line, for tests/cluster/ scripts
// that check its effects with the real kubectl. One call per run; results as JSON on stdout,
// failures as "error (<code>): <message>" on stderr with exit code 1.
//
//   kube-probe KUBECONFIG get RES NS NAME
//   kube-probe KUBECONFIG list RES NS LIMIT [LABEL-SELECTOR]    {"count", "resourceVersion",
//   "names"} kube-probe KUBECONFIG create RES NS < object.json kube-probe KUBECONFIG update RES NS
//   < object.json          (its resourceVersion is the precondition) kube-probe KUBECONFIG delete
//   RES NS NAME [RESOURCE-VERSION] kube-probe KUBECONFIG merge-patch RES NS NAME PATCH-JSON
//   kube-probe KUBECONFIG json-patch RES NS NAME RESOURCE-VERSION OPS-JSON
//   kube-probe KUBECONFIG apply RES NS MANAGER force|no-force < object.json
//   kube-probe KUBECONFIG write-together RES NS < objects.json (a JSON array; an object with a
//                                                 resourceVersion replaces that version)
//   kube-probe KUBECONFIG delete-together RES NS NAME...
//   kube-probe KUBECONFIG list-together RES NS COUNT     {"codes", "new_connections"}
//   kube-probe KUBECONFIG retry-annotate RES NS NAME KEY VALUE    (update_with_retry; a second
//       writer changes the object during the first attempt, so that one conflicts)
//   kube-probe KUBECONFIG watch ... / lease ... / event ...    (see kube_probe_loop.cpp)
//   kube-probe KUBECONFIG coordinator NS IDENTITY RUN-S ...   (see kube_probe_coordinator.cpp)
//   kube-probe KUBECONFIG slot NS NODE take|renew|fail ...     (see kube_probe_slot.cpp)
//
// RES: nodes, configmaps, shims, leases, events. NS: "-" for none.
#include "kube_probe.hpp"

#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/kubeapi/conflict_retry.hpp"

#include <cstdio>
#include <iostream>
#include <map>

using namespace shimkeeper;
using nlohmann::json;

util::Expected<kubeapi::Resource> probe_resource(const std::string& name) {
    static const std::map<std::string, kubeapi::Resource> k_known = {
        {"nodes", kubeapi::nodes_resource()},
        {"configmaps", kubeapi::config_maps_resource()},
        {"shims", cluster::model::shims_resource()},
        {"leases", kubeapi::leases_resource()},
        {"events", kubeapi::events_resource()},
    };
    auto found = k_known.find(name);
    if (found == k_known.end()) {
        return util::fail(util::ErrorCode::invalid_input, "unknown resource " + name);
    }
    return found->second;
}

int probe_fail(const util::Error& error) {
    std::fprintf(stderr, "error (%s): %s\n", util::to_string(error.code()),
                 error.message().c_str());
    return 1;
}

namespace {

json read_stdin() {
    return json::parse(std::cin);
}

int print(const util::Expected<json>& result) {
    if (!result) {
        return probe_fail(result.error());
    }
    std::cout << result->dump() << "\n";
    return 0;
}

util::Expected<json> run(kubeapi::Client& client, const std::vector<std::string>& args) {
    const std::string& command = args.at(0);
    kubeapi::Resource resource = TRY(probe_resource(args.at(1)));
    std::string ns = args.at(2) == "-" ? "" : args.at(2);
    if (command == "get") {
        return client.get(resource, ns, args.at(3));
    }
    if (command == "list") {
        kubeapi::ListOptions options;
        options.limit = std::stol(args.at(3));
        options.label_selector = args.size() > 4 ? args[4] : "";
        kubeapi::ObjectList list = TRY(client.list(resource, ns, options));
        json names = json::array();
        for (const auto& item : list.items) {
            names.push_back(item["metadata"]["name"]);
        }
        return json{{"count", list.items.size()},
                    {"resourceVersion", list.resource_version},
                    {"names", names}};
    }
    if (command == "create") {
        return client.create(resource, ns, read_stdin());
    }
    if (command == "update") {
        return client.update(resource, ns, read_stdin());
    }
    if (command == "delete") {
        std::optional<std::string> version;
        if (args.size() > 4) {
            version = args[4];
        }
        TRY(client.remove(resource, ns, args.at(3), version));
        return json{{"deleted", args.at(3)}};
    }
    if (command == "merge-patch") {
        return client.merge_patch(resource, ns, args.at(3), json::parse(args.at(4)));
    }
    if (command == "json-patch") {
        return client.json_patch(resource, ns, args.at(3), json::parse(args.at(5)), args.at(4));
    }
    if (command == "apply") {
        kubeapi::ApplyOptions options;
        options.field_manager = args.at(3);
        options.force = args.at(4) == "force" ? kubeapi::ApplyOptions::Force::yes
                                              : kubeapi::ApplyOptions::Force::no;
        return client.apply(resource, ns, read_stdin(), options);
    }
    if (command == "write-together") { // stdin: a JSON array of objects
        json results = json::array();
        for (auto& written : client.write_together(resource, ns, read_stdin())) {
            results.push_back(written ? json{{"name", (*written)["metadata"]["name"]}}
                                      : json{{"error", written.error().message()}});
        }
        return json{{"results", results}};
    }
    if (command == "delete-together") { // NAME...
        std::vector<kubeapi::ApiClient::Removal> removals;
        for (std::size_t i = 3; i < args.size(); ++i) {
            removals.push_back({args[i], std::nullopt});
        }
        json results = json::array();
        for (auto& removed : client.remove_together(resource, ns, removals)) {
            results.push_back(removed ? json{{"deleted", true}}
                                      : json{{"error", removed.error().message()}});
        }
        return json{{"results", results}};
    }
    if (command == "list-together") { // COUNT: that many lists sent at once, and the
                                      // connections they had to open
        const std::string path = TRY(kubeapi::collection_path(resource, ns));
        std::vector<std::unique_ptr<kubeapi::Transfer>> transfers;
        std::vector<kubeapi::Transfer*> sent;
        for (long i = 0; i < std::stol(args.at(3)); ++i) {
            transfers.push_back(TRY(client.connection().prepare(kubeapi::Method::get, path)));
            sent.push_back(transfers.back().get());
        }
        json codes = json::array();
        long connections = 0;
        for (auto& response : client.connection().perform_together(sent)) {
            if (!response) {
                return std::unexpected(std::move(response).error());
            }
            codes.push_back(response->http_code);
            connections += response->new_connections;
        }
        return json{{"codes", codes}, {"new_connections", connections}};
    }
    if (command == "retry-annotate") {
        int attempts = 0;
        return kubeapi::update_with_retry(
            client, resource, ns, args.at(3),
            [&](json& object) -> util::Expected<kubeapi::Changed> {
                if (++attempts == 1) { // another writer gets in between our read and write
                    TRY(client.merge_patch(
                        resource, ns, args.at(3),
                        {{"metadata", {{"annotations", {{"probe/other", "writer"}}}}}}));
                }
                object["metadata"]["annotations"][args.at(4)] =
                    args.at(5) + "-attempt-" + std::to_string(attempts);
                return kubeapi::Changed::yes;
            });
    }
    return util::fail(util::ErrorCode::invalid_input, "unknown command " + command);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: kube-probe KUBECONFIG COMMAND RES ...\n");
        return 2;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    auto client = kubeapi::Client::from_kubeconfig(argv[1]);
    if (!client) {
        return probe_fail(client.error());
    }
    try {
        if (args[0] == "watch" || args[0] == "lease" || args[0] == "event") {
            return probe_loop_command(*client, args);
        }
        if (args[0] == "coordinator") {
            return coordinator_command(*client, args);
        }
        if (args[0] == "slot") {
            return slot_command(*client, args);
        }
        return print(run(*client, args));
    } catch (const std::exception& e) { // bad arguments: std::out_of_range, json parse errors
        std::fprintf(stderr, "kube-probe: %s\n", e.what());
        return 2;
    }
}
