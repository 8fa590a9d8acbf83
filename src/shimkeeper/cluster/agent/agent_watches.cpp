#include "shimkeeper/cluster/agent/agent_watches.hpp"

#include "shimkeeper/cluster/agent/slot_keeper.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <algorithm>

namespace shimkeeper::cluster::agent {

util::Expected<std::unique_ptr<AgentWatches>> AgentWatches::start(const ClusterSource& source,
                                                                  const util::Log& log) {
    auto loop = TRY(kubeapi::CurlEventLoop::create());
    std::unique_ptr<AgentWatches> out(new AgentWatches(std::move(loop), log));
    out->m_watch = TRY(ClusterWatch::create(*out->m_loop, source, log));
    TRY(out->m_watch->start());

    out->m_node_name = source.node_name();
    out->m_node_name_origin = source.node_name_origin();
    out->m_namespace = source.settings().namespace_name;
    out->m_lease_client = std::make_unique<kubeapi::Client>(
        TRY(kubeapi::Client::from_kubeconfig(source.kubeconfig())));
    out->m_slot_client = std::make_unique<kubeapi::Client>(
        TRY(kubeapi::Client::from_kubeconfig(source.kubeconfig())));
    out->m_slot_client->set_throttle_retries(0); // a lost try costs nothing (claim_free_slot)
    out->m_slots.set_listener([watches = out.get()](const std::string& shim, bool may_free) {
        watches->on_slot_change(shim, may_free);
    });
    // The slot Leases of the namespace: a node waiting for a slot learns of a free one here.
    out->m_lease_watch = std::make_unique<kubeapi::Watch>(
        out->m_lease_client->connection(), *out->m_loop, kubeapi::leases_resource(),
        out->m_namespace, kubeapi::WatchSettings{},
        [watches = out.get()](const kubeapi::WatchEvent& event) { watches->m_slots.apply(event); });
    TRY(out->m_lease_watch->start());
    // Arms the loop's timers so that its fd becomes readable when the first one is due.
    TRY(out->m_loop->dispatch_pending());
    return out;
}

AgentWatches::~AgentWatches() = default;

// Decision (ARCHITECTURE.md): jitter, not a queue. The bound is 20 ms plus 10 ms for each node
// the coordinator counts as still updating (waiting or holding), at most 10 s: the first of n
// uniform draws comes after about bound/n = 10 ms, about as long as its take (one request) takes
// to reach the others' boards, so about one more node tries and loses (a 409, no reconcile). With
// 4 ms a node and a 1 s cap, 1000 waiting nodes sent ~14 losing creates for every slot freed.
// Where the API server or the machine is slower than that, races are lost more often, and each
// race this node lost in a row doubles its bound (up to 16 times): the crowd spreads itself until
// a take is seen before the next node tries.
std::chrono::milliseconds AgentWatches::wake_jitter_bound(const std::string& shim) const {
    long updating = 0;
    if (const nlohmann::json* object = m_watch->shim(shim)) {
        updating = object->value(nlohmann::json::json_pointer("/status/nodes/updating"), 0L);
    }
    return std::chrono::milliseconds(std::clamp(20 + 10 * updating, 20L, 10'000L) << m_lost_races);
}

void AgentWatches::wait_for(std::map<std::string, std::optional<model::RolloutTarget>> shims) {
    m_waiting = std::move(shims);
}

void AgentWatches::claim_free_slot() {
    const std::vector<model::SlotSeen>& seen = m_slots.slots();
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [shim, target] : m_waiting) {
        if (!target || m_claimed.contains(shim)) {
            continue; // unresolved (the coordinator's status wakes it: ClusterWatch), or claimed
        }
        const model::SlotDecision decision =
            model::decide_slot(seen, *target, m_node_name, slot_search_start(m_node_name));
        using Kind = model::SlotDecision::Kind;
        if (decision.kind == Kind::hold) {
            m_wake_now = true; // ours from before: the reconcile writes it again
            continue;
        }
        if (decision.kind != Kind::take) {
            continue;
        }
        SlotKeeper keeper(*m_slot_client, m_namespace, m_node_name, k_slot_lease_duration);
        auto taken = keeper.take(*target, decision);
        if (!taken) {
            // Not a reconcile on top (it would only ask again): an API server that answers 429
            // under load needs fewer requests, so this counts as a lost race and the next slot
            // freed, a holder's expiry or the drift check tries again.
            m_log.warning("rollout: " + taken.error().message());
            m_lost_races = std::min(m_lost_races + 1, 4);
        } else if (*taken) {
            m_log.info("rollout: took slot " + model::slot_lease_name(shim, decision.index) +
                           " for Shim/" + shim + " generation " +
                           std::to_string(target->generation),
                       {.shim = shim});
            m_claimed[shim] = ClaimedSlot{std::move(**taken), now};
            m_wake_now = true;
            m_lost_races = 0;
        } else {
            // Another node was first: its slot reaches the board, and the next one freed sets
            // the timer again, over a longer span (wake_jitter_bound).
            m_lost_races = std::min(m_lost_races + 1, 4);
        }
    }
}

void AgentWatches::on_slot_change(const std::string& shim, bool may_free) {
    if (!m_waiting.contains(shim)) {
        return;
    }
    if (may_free) {
        // A new draw for every slot freed, the earlier kept: with k slots free at once (a wave of
        // holders finishing together) the first of the waiting nodes comes k times sooner, so a
        // burst of releases is refilled as fast as a single one.
        std::uniform_int_distribution<long> draw(0, wake_jitter_bound(shim).count());
        const std::chrono::milliseconds delay(draw(m_rng));
        if (!m_wake_armed || std::chrono::steady_clock::now() + delay < m_wake_due) {
            arm_wake(delay);
        }
    }
}

void AgentWatches::arm_wake(std::chrono::milliseconds delay) {
    auto timer = m_loop->after(delay, [this] {
        m_wake_armed = false;
        claim_free_slot();
    });
    if (!timer) {
        m_log.warning("rollout: " + timer.error().message());
        m_wake_now = true;
        return;
    }
    m_wake_timer = std::move(*timer);
    m_wake_armed = true;
    m_wake_due = std::chrono::steady_clock::now() + delay;
}

bool AgentWatches::dispatch() {
    if (auto ran = m_loop->dispatch_pending(); !ran) {
        m_log.error("cluster watches: " + ran.error().message());
    }
    // A watch that starts or stops failing is logged once, not per retry.
    const std::string problem = m_watch->problem();
    // Watches back in sync after failing (an API server back, a renewed token): a reconcile
    // reads the cluster again, so the node and its status stop riding on the last reading.
    bool back_in_sync = false;
    if (problem != m_last_problem) {
        if (!problem.empty()) {
            m_log.warning("cluster watches: " + problem);
        } else {
            m_log.info("cluster watches: in sync");
            back_in_sync = true;
        }
        m_last_problem = problem;
    }
    const bool changed = m_watch->take_changed();
    return changed || back_in_sync || m_wake_now;
}

} // namespace shimkeeper::cluster::agent
