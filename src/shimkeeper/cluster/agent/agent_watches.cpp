#include "shimkeeper/cluster/agent/agent_watches.hpp"

#include "shimkeeper/cluster/agent/slot_keeper.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_view.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <algorithm>

namespace shimkeeper::cluster::agent {

util::Expected<std::unique_ptr<AgentWatches>> AgentWatches::start(ClusterSource& source,
                                                                  const util::Log& log) {
    auto loop = TRY(kubeapi::CurlEventLoop::create());
    std::unique_ptr<AgentWatches> out(new AgentWatches(std::move(loop), log));
    source.identify_once();
    out->m_watch = TRY(ClusterWatch::create(*out->m_loop, source, log));
    TRY(out->m_watch->start());

    out->m_node_name = source.node_name();
    out->m_node_name_origin = source.node_name_origin();
    out->m_namespace = source.settings().namespace_name;
    out->m_lease_client = std::make_unique<kubeapi::Client>(
        TRY(kubeapi::Client::from_kubeconfig(source.kubeconfig())));
    TRY(out->open_slot_watch());
    // Arms the loop's timers so that its fd becomes readable when the first one is due.
    TRY(out->m_loop->dispatch_pending());
    return out;
}

AgentWatches::~AgentWatches() = default;

util::Expected<void> AgentWatches::open_slot_watch() {
    m_close_armed = false; // a close planned already finds the watch busy, and does nothing
    if (m_lease_watch) {
        return {};
    }
    m_slots = model::SlotBoard{};
    m_slots.set_listener([this](const std::string& shim, bool) { on_slot_change(shim); });
    // Only the slot Leases granted to this node (slot_grant.hpp): what other nodes hold is the
    // coordinator's business, and watching it would cost every agent every slot event.
    kubeapi::WatchSettings own_slots;
    own_slots.label_selector =
        std::string(model::k_slot_holder_label) + "=" + model::holder_label_value(m_node_name);
    own_slots.own_connection = true; // closed when idle: the API server must see it go
    // Opened for every rollout the node waits in: one request (and one TLS handshake) that
    // streams the node's slots and then watches them, instead of a list and a watch.
    own_slots.stream_initial = true;
    auto watch = std::make_unique<kubeapi::Watch>(
        m_lease_client->connection(), *m_loop, kubeapi::leases_resource(), m_namespace,
        std::move(own_slots), [this](const kubeapi::WatchEvent& event) {
            m_slots.apply(event, std::chrono::steady_clock::now());
        });
    TRY(watch->start());
    m_lease_watch = std::move(watch);
    m_log.debug("cluster watches: watching this node's rollout slots");
    return {};
}

bool AgentWatches::waits_for_a_slot() const {
    // An unresolved target asks for nothing yet: the coordinator's status resolves it first.
    return std::ranges::any_of(m_waiting, [](const auto& w) { return w.second.has_value(); });
}

bool AgentWatches::slot_watch_idle() const {
    return m_lease_watch && m_slots.synced() && !waits_for_a_slot() && m_claimed.empty() &&
           m_slots.slots().empty();
}

void AgentWatches::close_slot_watch_when_idle() {
    if (!slot_watch_idle() || m_close_armed) {
        return; // busy (the timer, if armed, looks again), or armed already
    }
    // Not at once: a node that asks again soon (k_slot_watch_grace) keeps the watch.
    auto timer = m_loop->after(k_slot_watch_grace, [this] {
        // m_close_timer is this callback's source: replaced later, not here.
        m_close_armed = false;
        if (slot_watch_idle()) {
            m_lease_watch.reset();
            m_slots = model::SlotBoard{};
            m_log.debug("cluster watches: no rollout slot waited for or held: the watch on "
                        "them closed");
        }
    });
    if (timer) {
        m_close_timer = std::move(*timer);
        m_close_armed = true;
    } else {
        m_log.warning("cluster watches: " + timer.error().message());
    }
}

void AgentWatches::wait_for(std::map<std::string, std::optional<model::RolloutTarget>> shims,
                            const std::set<std::string>& held) {
    m_waiting = std::move(shims);
    for (const std::string& shim : held) {
        m_asked_since.erase(shim);
    }
    if (waits_for_a_slot()) {
        if (auto opened = open_slot_watch(); !opened) {
            m_log.warning("cluster watches: " + opened.error().message());
        }
    }
    // A grant seen during the reconcile is claimed now, not at the next one.
    claim_granted_slots();
    close_slot_watch_when_idle();
}

model::SlotRequests AgentWatches::requests() {
    model::SlotRequests out;
    for (const auto& [shim, target] : m_waiting) {
        if (!target) {
            continue; // unresolved: nothing to ask for yet
        }
        model::SlotRequest request{target->uid, target->generation, {}, m_slots.refused()};
        auto asked = m_asked_since.find(shim);
        if (asked != m_asked_since.end() && asked->second.is_for(*target)) {
            request.since = asked->second.since;
        } else {
            request.since = kubeapi::micro_time(std::chrono::system_clock::now());
            m_asked_since[shim] = request;
        }
        out[shim] = std::move(request);
    }
    std::erase_if(m_asked_since, [&](const auto& entry) { return !out.contains(entry.first); });
    return out;
}

void AgentWatches::claim_granted_slots() {
    // Not a grant this node gave back, by this process or before a restart (its Node says so).
    const nlohmann::json* node = m_watch ? m_watch->node() : nullptr;
    if (node == nullptr) {
        return; // the reconcile the Node's first event wakes claims
    }
    const std::vector<model::SlotSeen> own = model::without_given_back(m_slots.slots(), *node);
    // The board is as fresh as the loop's last dispatch: after a reconcile (wait_for) that may be
    // long ago, and the claim then too old for the gate to use untaken.
    const auto now = m_slots_dispatched;
    for (const auto& [shim, target] : m_waiting) {
        if (!target || m_claimed.contains(shim)) {
            continue; // unresolved (the coordinator's status wakes it: ClusterWatch), or claimed
        }
        const model::SlotDecision decision =
            model::decide_granted_slot(own, *target, m_node_name, {});
        if (decision.kind != model::SlotDecision::Kind::hold) {
            continue;
        }
        // No request here: the reconcile this wakes takes it with its `installing` report.
        if (auto taken = SlotKeeper::adopt(*target, decision, now)) {
            m_log.info("rollout: took slot " + model::slot_lease_name(shim, decision.index) +
                           " for Shim/" + shim + " generation " +
                           std::to_string(target->generation) +
                           ", granted by the coordinator (its entry goes with the `installing` "
                           "report)",
                       {.shim = shim});
            m_claimed[shim] = std::move(*taken);
            m_wake_now = true;
        }
    }
}

// A refused slot watch (deploy/ not applied, or an older one: node identities read the slot
// Leases of the agent namespace through RBAC) never syncs: the board says why, for the gate's wait,
// and the node's next report carries it in its requests, where the coordinator shows it in the
// Shim's status. A refusal that comes or goes wakes the daemon, so that its report says so.
void AgentWatches::note_slot_watch_refusal() {
    std::string refused;
    if (m_lease_watch && m_lease_watch->state().refused()) {
        refused = "watching its rollout slot Leases in namespace " + m_namespace + ": " +
                  m_lease_watch->state().last_problem();
    }
    if (refused != m_slots.refused()) {
        if (!refused.empty()) {
            m_log.warning("rollout: the API server refuses " + refused);
        } else {
            // A grant made while this node could not see it may have been freed unused, which
            // serves the request (slot_grant.hpp): ask anew.
            m_asked_since.clear();
        }
        m_slots.set_refused(std::move(refused));
        m_wake_now = true;
    }
}

bool AgentWatches::take_urgent() {
    const bool all_granted = std::ranges::all_of(m_waiting, [&](const auto& waiting) {
        return !waiting.second || m_claimed.contains(waiting.first);
    });
    return std::exchange(m_wake_now, false) && all_granted;
}

void AgentWatches::on_slot_change(const std::string& shim) {
    if (m_waiting.contains(shim)) {
        claim_granted_slots();
    }
}

bool AgentWatches::dispatch() {
    m_slots_dispatched = std::chrono::steady_clock::now(); // before: the events read come after
    if (auto ran = m_loop->dispatch_pending(); !ran) {
        m_log.error("cluster watches: " + ran.error().message());
    }
    note_slot_watch_refusal();
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
    close_slot_watch_when_idle();
    return changed || back_in_sync || m_wake_now;
}

} // namespace shimkeeper::cluster::agent
