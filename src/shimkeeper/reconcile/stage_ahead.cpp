#include "shimkeeper/reconcile/stage_ahead.hpp"

#include "shimkeeper/reconcile/stage.hpp"

namespace shimkeeper::reconcile {

StagedAhead stage_ahead(const Node& node, const std::vector<spec::ShimSpec>& shims) {
    StagedAhead out;
    auto state = node.store.load_state();
    if (!state) {
        node.log.warning("not staging ahead of the rollout slot: " + state.error().message());
        for (const spec::ShimSpec& shim : shims) {
            out.failed.push_back(shim.name);
        }
        return out;
    }
    const StageOptions options = stage_options_of(node);
    for (const spec::ShimSpec& shim : shims) {
        const util::Log log = node.log.with({.shim = shim.name, .handler = shim.handler});
        if (!content_is_pinned(shim)) {
            log.debug(shim.name + ": not staged ahead of its rollout slot (" +
                      shim.fetch.display() + " pins no digest); its transaction fetches it");
            out.unpinned.push_back(shim.name);
            continue;
        }
        auto staged = stage_shim(shim, known_digest(shim, state->current_generation(), node.store),
                                 node.store, node.downloader, options, log);
        if (!staged && node.abandon && node.abandon()) {
            log.info(shim.name + ": staging ahead of its rollout slot stopped; nothing was stored");
            out.failed.push_back(shim.name);
        } else if (!staged) {
            log.warning(shim.name + ": could not stage ahead of its rollout slot (" +
                        staged.error().message() + "); its transaction fetches it again");
            out.failed.push_back(shim.name);
        } else if (staged->downloaded) {
            log.info(shim.name + ": staged sha256:" + staged->digest +
                         " ahead of its rollout slot; the slot will hold only the change",
                     {.digest = "sha256:" + staged->digest});
            out.downloaded.push_back(shim.name);
        } else {
            out.held.push_back(shim.name);
        }
    }
    return out;
}

std::set<std::string> staged_ahead_digests(const Node& node,
                                           const std::vector<spec::ShimSpec>& shims) {
    std::set<std::string> out;
    auto state = node.store.load_state();
    if (!state) {
        return out; // the transaction meets the same error, and collects nothing
    }
    for (const spec::ShimSpec& shim : shims) {
        if (!content_is_pinned(shim)) {
            continue;
        }
        if (auto digest = known_digest(shim, state->current_generation(), node.store)) {
            out.insert(*digest);
        }
    }
    return out;
}

} // namespace shimkeeper::reconcile
