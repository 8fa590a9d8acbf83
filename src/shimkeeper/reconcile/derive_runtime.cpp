#include "shimkeeper/reconcile/derive_runtime.hpp"

#include "shimkeeper/reconcile/record.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/sources.hpp"
#include "shimkeeper/store/locate_binary.hpp"

namespace shimkeeper::reconcile {

namespace {

// The artifact's digest, fetching it into the store when `fetch` allows; nullopt: not held.
util::Expected<std::optional<std::string>> held_digest(const spec::ShimSpec& shim,
                                                       const store::Generation* current,
                                                       const store::Store& store,
                                                       const ArtifactFetch* fetch) {
    auto digest = known_digest(shim, current, store);
    if (digest && store.has_artifact(*digest)) {
        return digest;
    }
    if (fetch == nullptr) {
        return std::nullopt;
    }
    auto staged = TRY(stage_shim(shim, digest, store, fetch->downloader, fetch->options,
                                 fetch->log.with({.shim = shim.name, .handler = shim.handler})));
    return staged.digest;
}

util::Expected<void> derive_from_store(spec::ShimSpec& shim, const std::string& digest,
                                       const store::Store& store) {
    auto listing = TRY(store.artifact_listing(digest));
    auto binary = store::binary_saying_runtime_type(listing, shim.handler);
    if (!binary) {
        return std::unexpected(std::move(binary.error())
                                   .with_context("shim '" + shim.name + "' (" +
                                                 shim.location.to_string() +
                                                 "): no runtimeType given, and the artifact "
                                                 "sha256:" +
                                                 digest + " does not say it"));
    }
    shim.binary = *binary;
    shim.runtime_type = *spec::runtime_type_said_by_binary(*binary);
    shim.runtime_type_from_artifact = false;
    shim.runtime_type_derivation = std::string(k_derived_from_artifact) + *binary;
    if (!shim.fetch.sha256) {
        shim.fetch.sha256 = digest; // an unverified URL serves what was looked at, no other bytes
    }
    return {};
}

} // namespace

util::Expected<std::vector<spec::ShimSpec>>
derive_runtime_types(const std::vector<spec::ShimSpec>& target, const store::Generation* current,
                     const store::Store& store, const ArtifactFetch* fetch) {
    std::vector<spec::ShimSpec> derived;
    bool any = false;
    for (spec::ShimSpec shim : target) {
        if (shim.runtime_type_from_artifact) {
            any = true;
            if (auto digest = TRY(held_digest(shim, current, store, fetch))) {
                TRY(derive_from_store(shim, *digest, store));
            }
        }
        derived.push_back(std::move(shim));
    }
    if (any) {
        for (std::size_t i = 1; i < derived.size(); ++i) {
            TRY(spec::check_unique({derived.begin(), derived.begin() + static_cast<long>(i)},
                                   derived[i]));
        }
    }
    return derived;
}

} // namespace shimkeeper::reconcile
