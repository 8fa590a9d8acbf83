// The shim half of the plan: a pure function of (desired shims, what is known of their
// artifacts, installed generation) -> actions and the records of the generation to install.
// No I/O here; node_plan.hpp adds the links and config files and is what `plan` prints and
// `apply` executes.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/state.hpp"

#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::reconcile {

enum class ActionKind { install, upgrade, unchanged, remove };

const char* to_string(ActionKind kind);

// An artifact found in the store (or just staged): its digest and the binary inside it.
struct KnownArtifact {
    std::string digest;
    std::string binary_path;
};

struct ShimAction {
    ActionKind kind = ActionKind::unchanged;
    std::string name;
    std::string handler;
    std::string from_version; // empty for install
    std::string to_version;   // empty for remove
    std::string from_digest;
    std::string to_digest; // empty when the spec is unverified (known only after download)
    bool staged = false;   // the target artifact is already in the store: no download needed
    std::vector<std::string> reasons; // why an upgrade: "new artifact", "options changed", ...
};

struct Plan {
    std::vector<ShimAction> actions;          // desired shims in spec order, then removals
    std::vector<store::InstalledShim> target; // the records the node will run, spec order
    bool new_generation = false;              // target differs from the current generation

    std::size_t count(ActionKind kind) const;
};

// artifacts[i] belongs to desired[i]: nullopt while only a download would tell.
Plan compute_plan(const std::vector<spec::ShimSpec>& desired,
                  const std::vector<std::optional<KnownArtifact>>& artifacts,
                  const store::Generation* current);

} // namespace shimkeeper::reconcile
