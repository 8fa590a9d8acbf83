#include "shimkeeper/reconcile/plan.hpp"

#include <algorithm>
#include <sstream>

namespace shimkeeper::reconcile {

const char* to_string(ActionKind kind) {
    switch (kind) {
    case ActionKind::install:
        return "install";
    case ActionKind::upgrade:
        return "upgrade";
    case ActionKind::unchanged:
        return "unchanged";
    case ActionKind::remove:
        return "remove";
    }
    return "unknown";
}

bool Plan::converged() const {
    return std::all_of(actions.begin(), actions.end(),
                       [](const ShimAction& a) { return a.kind == ActionKind::unchanged; });
}

std::size_t Plan::count(ActionKind kind) const {
    return static_cast<std::size_t>(std::count_if(
        actions.begin(), actions.end(), [kind](const ShimAction& a) { return a.kind == kind; }));
}

std::string options_fingerprint(const toml::table& options) {
    std::ostringstream out;
    out << toml::toml_formatter(options, toml::format_flags::none);
    return out.str();
}

namespace {

// Everything that differs between what is installed and what is wanted, in words.
std::vector<std::string> differences(const spec::ShimSpec& want, const store::InstalledShim& have) {
    std::vector<std::string> reasons;
    if (want.fetch.sha256) {
        if (*want.fetch.sha256 != have.digest) {
            reasons.emplace_back("new artifact");
        }
    } else if (want.fetch.url != have.url) {
        // Unverified: the digest is only known after a download, so the URL stands for it.
        reasons.emplace_back("new url (unverified artifact)");
    }
    if (want.handler != have.handler) {
        reasons.push_back("handler " + have.handler + " -> " + want.handler);
    }
    if (want.runtime_type != have.runtime_type) {
        reasons.push_back("runtime_type " + have.runtime_type + " -> " + want.runtime_type);
    }
    if (want.binary != have.binary) {
        reasons.push_back("binary " + have.binary + " -> " + want.binary);
    }
    if (options_fingerprint(want.options) != have.options_toml) {
        reasons.emplace_back("options changed");
    }
    return reasons;
}

} // namespace

Plan compute_plan(const std::vector<spec::ShimSpec>& desired, const store::Generation* current,
                  const std::set<std::string>& store_digests) {
    Plan plan;
    for (const spec::ShimSpec& want : desired) {
        ShimAction action;
        action.name = want.name;
        action.handler = want.handler;
        action.to_version = want.version;
        action.to_digest = want.fetch.sha256.value_or("");
        action.staged = want.fetch.sha256 && store_digests.contains(*want.fetch.sha256);
        const store::InstalledShim* have = current ? current->find(want.name) : nullptr;
        if (have == nullptr) {
            action.kind = ActionKind::install;
        } else {
            action.from_version = have->version;
            action.from_digest = have->digest;
            action.reasons = differences(want, *have);
            action.kind = action.reasons.empty() ? ActionKind::unchanged : ActionKind::upgrade;
            if (action.kind == ActionKind::unchanged) {
                action.to_digest = have->digest;
                action.staged = store_digests.contains(have->digest);
            }
        }
        plan.actions.push_back(std::move(action));
    }
    if (current != nullptr) {
        std::vector<const store::InstalledShim*> removed;
        for (const store::InstalledShim& have : current->shims) {
            bool wanted = std::any_of(desired.begin(), desired.end(),
                                      [&](const spec::ShimSpec& s) { return s.name == have.name; });
            if (!wanted) {
                removed.push_back(&have);
            }
        }
        std::sort(removed.begin(), removed.end(),
                  [](auto* a, auto* b) { return a->name < b->name; });
        for (const store::InstalledShim* have : removed) {
            ShimAction action;
            action.kind = ActionKind::remove;
            action.name = have->name;
            action.handler = have->handler;
            action.from_version = have->version;
            action.from_digest = have->digest;
            plan.actions.push_back(std::move(action));
        }
    }
    return plan;
}

} // namespace shimkeeper::reconcile
