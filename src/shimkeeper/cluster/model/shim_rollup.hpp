// What the coordinator says about a Shim, from the Shim and the Nodes alone (pure):
//   nodes.selected   Nodes the Shim selects (selects_node: spec.nodeSelector, or every node
//                    without node-role.kubernetes.io/control-plane);
//   nodes.installed  of those, labelled true with the annotation `installed` at the Shim's
//                    current metadata.generation;
//   nodes.failed     of those, annotated `failed` at the current generation (a failure at an
//                    older generation is a node that has not tried the new one yet: updating);
//   nodes.updating   the rest of the selected ones.
// Conditions: Ready (every selected node installed at this generation; a Shim selecting no node
// is not Ready: its RuntimeClass could schedule nowhere), Progressing (nodes still on their way,
// or still uninstalling a deleted Shim), RuntimeClassReady (decided by the caller, which alone
// knows the RuntimeClass) and PoolConfined (pool_confinement.hpp: whether a node could label
// itself into the Shim's pool).
#pragma once

#include "shimkeeper/cluster/model/conditions.hpp"
#include "shimkeeper/cluster/model/node_shim_state.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::cluster::model {

struct NodeCounts {
    int selected = 0;
    int installed = 0;
    int failed = 0;
    int updating = 0;
    bool operator==(const NodeCounts&) const = default;
};

struct Rollup {
    std::int64_t generation = 0;
    NodeCounts counts;
    std::vector<std::string> failures; // "node-a (sha256 mismatch)", selected nodes only
    // Selected nodes on their way that the API server refuses what they need: their slot request
    // says so (watching their grants), or their Events do (a write to their own Node,
    // write_refusals.hpp): "node-a (HTTP 403: ...)".
    std::vector<std::string> refused;
    std::vector<std::string> carrying; // every Node with the shim's label or annotation
    // The same Nodes with what each says, for the deleting Shim's status: "node-b (removing:
    // blocked by 1 pod(s) ...)", "node-c (installed)" (an agent that does not act: stopped or
    // powered off), "node-d (label only)". A deleted Node carries nothing and is not listed.
    std::vector<std::string> carrying_said;
    // The runtime type each node installed at this generation says it runs the shim as, with
    // those nodes: for a Shim that leaves it to each node's artifact, what they derived.
    std::map<std::string, std::vector<std::string>> runtime_types;
};

// write_refusals: node -> what the API server refuses of its writes for this Shim.
Rollup rollup(const nlohmann::json& shim, const NodeViews& nodes,
              const std::map<std::string, std::string>& write_refusals = {});

// Ready and Progressing for this rollup (a deleted Shim: uninstalling).
std::vector<Condition> node_conditions(const nlohmann::json& shim, const Rollup& rollup);

// The status the Shim should have: observedGeneration, nodes and conditions merged into its
// current ones, and spec_status_fields. For a Shim whose runtime type each node's artifact says:
// runtimeType when every node installed at this generation derived the same one, and
// runtimeTypeFrom naming the nodes that disagree otherwise. `runtime_class`: the RuntimeClassReady
// condition, or nullopt to keep whatever it says now (the RuntimeClass could not be judged this
// time).
nlohmann::json desired_status(const nlohmann::json& shim, const Rollup& rollup,
                              const std::optional<Condition>& runtime_class,
                              const std::string& now);

// Whether writing `desired` would change the Shim's status (only the fields we own count).
bool status_differs(const nlohmann::json& shim, const nlohmann::json& desired);
// Whether it would change more than the progress: the node counts and the conditions' messages
// (which count nodes too). Every agent watches every Shim, so each status write reaches all of
// them: anything beyond progress (a generation observed, a slot count, a condition's status or
// reason) is written at once, progress alone at most every k_progress_interval and, when the
// node counts moved, only once they reach another step (progress_reached_another_step).
bool status_differs_beyond_progress(const nlohmann::json& shim, const nlohmann::json& desired);
inline constexpr std::chrono::seconds k_progress_interval{5};

// How far a rollout is, in steps: the selected nodes done with the generation (installed or
// failed) in k_progress_steps parts, 0 .. k_progress_steps (from status.nodes).
// Why steps and so few: a write every k_progress_interval would reach every agent
// once per interval for as long as a rollout lasts, a cost that grows with its length as well as
// the cluster. With one step between the start and the end, a Shim's rollout costs each agent
// four Shim events (the edit, the generation observed, halfway, done) beside its own Node's three
// and its own slot's three: ten. Each node's own state is on its Node at all times.
inline constexpr int k_progress_steps = 2;
int progress_step(const nlohmann::json& status);
// Whether progress alone is worth a write: the node counts reached another step, or no selected
// node is on its way (the fleet changed, not a rollout), or the counts did not change and only a
// message did (a deleted Shim's list of nodes still carrying it).
bool progress_reached_another_step(const nlohmann::json& shim, const nlohmann::json& desired);

} // namespace shimkeeper::cluster::model
