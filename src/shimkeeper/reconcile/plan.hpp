// The plan: a pure function of (desired shims, installed generation, store contents) -> actions.
// No I/O here, so `plan` can print exactly what `apply` would execute, and tests need no disk.
#pragma once

#include "shimkeeper/spec/shim_spec.hpp"
#include "shimkeeper/store/state.hpp"

#include <set>
#include <string>
#include <vector>

namespace shimkeeper::reconcile {

enum class ActionKind { install, upgrade, unchanged, remove };

const char* to_string(ActionKind kind);

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
    std::vector<ShimAction> actions; // desired shims in spec order, then removals by name

    // True when apply would change nothing on the node: no download, no write, no restart.
    bool converged() const;
    std::size_t count(ActionKind kind) const;
};

// The serialised options table as stored in a generation (stable across runs).
std::string options_fingerprint(const toml::table& options);

Plan compute_plan(const std::vector<spec::ShimSpec>& desired, const store::Generation* current,
                  const std::set<std::string>& store_digests);

} // namespace shimkeeper::reconcile
