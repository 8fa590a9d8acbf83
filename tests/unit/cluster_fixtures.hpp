// Shim objects, their view from a node, and store states for the unit tests of cluster mode's
// node side (test_cluster_report.cpp, test_cluster_rollout_gate.cpp).
#pragma once

#include "shimkeeper/cluster/agent/cluster_source.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/reconcile/record.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shimkeeper::cluster::agent::fixtures {

using nlohmann::json;

inline json shim_object(const std::string& name, long generation, const std::string& sha) {
    return {{"apiVersion", "containerd.x-k8s.io/v1alpha1"},
            {"kind", "Shim"},
            {"metadata", {{"name", name}, {"generation", generation}, {"resourceVersion", "7"}}},
            {"spec",
             {{"runtimeType", "io.containerd." + name + ".v2"},
              {"fetchStrategy",
               {{"type", "anonymousHttp"},
                {"anonHttp", {{"location", "http://127.0.0.1/" + name}, {"sha256", sha}}}}}}}};
}

inline ShimSeen on_node(const json& object, bool selects) {
    ShimSeen shim;
    shim.name = object["metadata"]["name"];
    shim.generation = object["metadata"]["generation"];
    shim.object = object;
    shim.selects = selects;
    return shim;
}

inline spec::ShimSpec spec_of(const json& object) {
    return model::shim_spec_of(object, "amd64").value();
}

inline store::StoreState state_with(const std::vector<spec::ShimSpec>& specs) {
    store::StoreState state;
    store::Generation generation;
    generation.number = 1;
    for (const auto& spec : specs) {
        generation.shims.push_back(
            reconcile::record_of(spec, spec.fetch.sha256.value_or(""), "bin/x"));
    }
    state.generations.push_back(generation);
    state.current = 1;
    return state;
}

inline const std::string k_sha_a(64, 'a');
inline const std::string k_sha_b(64, 'b');

} // namespace shimkeeper::cluster::agent::fixtures
