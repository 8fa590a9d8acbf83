// A Shim object without runtimeType or binary (the proposal's and runtime-class-manager's
// spelling): the artifact says both, by the name of the shim binary it holds
// (containerd-shim-<name>-v<N> -> io.containerd.<name>.v<N>). This runs first in a transaction,
// before anything is planned, so that every later step (plan, links, config, health, records)
// sees a complete spec exactly as if the object had written it: nothing downstream knows about
// derivation (README, "The Shim object").
#pragma once

#include "shimkeeper/fetch/downloader.hpp"
#include "shimkeeper/reconcile/stage.hpp"
#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/state.hpp"
#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/log.hpp"

#include <vector>

namespace shimkeeper::reconcile {

// What a transaction needs to fetch an artifact that is not in the store yet.
struct ArtifactFetch {
    fetch::Downloader& downloader;
    const StageOptions& options;
    const util::Log& log;
};

// Every spec with runtime_type_from_artifact, completed from its artifact: read from the store
// when it holds it, else fetched and stored first (`fetch`; nullptr: leave the handler's guess,
// as `plan` does without the network). A derived spec is pinned to the digest it was derived
// from, so that what is installed is exactly what was looked at. The set-level check (binaries
// unique) runs again, as two artifacts may name the same binary. Other specs pass unchanged.
util::Expected<std::vector<spec::ShimSpec>>
derive_runtime_types(const std::vector<spec::ShimSpec>& target, const store::Generation* current,
                     const store::Store& store, const ArtifactFetch* fetch);

} // namespace shimkeeper::reconcile
