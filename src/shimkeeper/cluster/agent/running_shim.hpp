// What the node runs of a Shim, as both the rollout gate (does this node have a change to make?)
// and the Node report (is the Shim installed?) judge it, so the two never disagree.
#pragma once

#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/state.hpp"

#include <string>

namespace shimkeeper::cluster::agent {

// The spec the Shim object `name` became among the desired shims (not a file's shim of that
// name); nullptr when it is not among them.
const spec::ShimSpec* desired_from(const spec::DesiredShims& desired, const std::string& name);

// The record of `name` in the current generation; nullptr when there is none.
const store::InstalledShim* running(const store::StoreState& state, const std::string& name);

// The node runs exactly `spec` (the origin's resourceVersion aside); false for no record.
bool runs_exactly(const store::InstalledShim* record, const spec::ShimSpec& spec);

} // namespace shimkeeper::cluster::agent
