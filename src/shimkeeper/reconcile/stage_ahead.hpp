// Staging ahead of a rollout slot: a node whose Shim waits for a slot fetches, verifies and
// stores the new artifact before it asks for one, so that the slot is held for the change only
// (links, config, restart, health) and not for a download. Only the content-addressed store
// changes, as with `shimkeeper fetch`: nothing a slot guards. A failure here is not the rollout's
// failure: it is logged, and the transaction the slot brings fetches again and reports what it
// meets there (a halt comes from a slot marked failed, never from a node that holds none).
#pragma once

#include "shimkeeper/reconcile/node.hpp"
#include "shimkeeper/spec/shim_spec.hpp"

#include <set>
#include <string>
#include <vector>

namespace shimkeeper::reconcile {

struct StagedAhead {
    std::vector<std::string> downloaded; // fetched now and stored
    std::vector<std::string> held;       // already in the store, intact: no request
    std::vector<std::string> failed;     // logged as warnings; the store is as it was
    std::vector<std::string> unpinned;   // not staged: see stage_ahead
};

// Stages each of `shims` whose content is pinned (content_is_pinned). An unpinned URL or tag is
// left to its transaction: with no digest to find it by, every reconcile that waits would
// download it again, and the bytes could change before the slot comes.
StagedAhead stage_ahead(const Node& node, const std::vector<spec::ShimSpec>& shims);

// The store digests stage_ahead stages for `shims` as far as they are known without a request
// (known_digest): what a transaction's garbage collection must keep (Node::keep_artifacts).
std::set<std::string> staged_ahead_digests(const Node& node,
                                           const std::vector<spec::ShimSpec>& shims);

} // namespace shimkeeper::reconcile
