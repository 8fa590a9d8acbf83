#include "shimkeeper/cluster/agent/rollout_gate.hpp"

#include "shimkeeper/cluster/agent/running_shim.hpp"
#include "shimkeeper/cluster/agent/slot_board_reader.hpp"
#include "shimkeeper/cluster/model/node_state.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/cluster/model/slot_view.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/reconcile/fault.hpp"
#include "shimkeeper/reconcile/record.hpp"

#include <algorithm>
#include <functional>
#include <thread>

namespace shimkeeper::cluster::agent {

using nlohmann::json;

std::vector<SlotNeed> slot_needs(const ClusterReading& reading, const spec::DesiredShims& desired,
                                 const store::StoreState& state) {
    std::vector<SlotNeed> out;
    for (const ShimSeen& shim : reading.shims) {
        auto policy = model::rollout_policy_of(shim.object);
        if (!policy || !policy->rolling) {
            continue; // recreate; an invalid strategy fails the load before this
        }
        const spec::ShimSpec* want = nullptr;
        bool file_owns = false;
        for (const spec::ShimSpec& spec : desired.shims) {
            if (spec.name == shim.name) {
                if (model::is_origin_of_shim(spec.location.to_string(), shim.name)) {
                    want = &spec;
                } else {
                    file_owns = true;
                }
            }
        }
        const store::InstalledShim* have = running(state, shim.name);
        if (file_owns || (have != nullptr && !model::is_origin_of_shim(have->origin, shim.name))) {
            continue;
        }
        if (want == nullptr && have == nullptr) {
            continue;
        }
        if (want != nullptr && runs_exactly(have, *want)) {
            continue;
        }
        SlotNeed need;
        need.shim = shim.name;
        if (auto slots = model::slots_for_node(*policy, shim.object)) {
            need.target = model::RolloutTarget{
                shim.name, shim.object.value(json::json_pointer("/metadata/uid"), std::string()),
                shim.generation, *slots};
        } else {
            need.why_unresolved = "waiting for the coordinator to resolve maxUpdate of Shim/" +
                                  shim.name + " into a slot count";
        }
        out.push_back(std::move(need));
    }
    return out;
}

util::Expected<spec::DesiredShims> held_back_desired(const spec::DesiredShims& desired,
                                                     const store::StoreState& state,
                                                     const std::set<std::string>& held_back) {
    spec::DesiredShims out = desired;
    std::erase_if(out.shims, [&](const spec::ShimSpec& spec) {
        return held_back.contains(spec.name) &&
               model::is_origin_of_shim(spec.location.to_string(), spec.name);
    });
    const store::Generation* current = state.current_generation();
    for (const std::string& name : held_back) {
        const store::InstalledShim* have = running(state, name);
        if (have == nullptr) {
            continue;
        }
        spec::ShimSpec kept = TRY(reconcile::spec_of(*have, current->number));
        kept.location = {have->origin, 0, 0}; // still the Shim's: the report reads the origin
        out.shims.push_back(std::move(kept));
    }
    return out;
}

namespace {

// The claim of `target`'s Shim object and generation, taken from `claimed` when `usable` says so
// of its age.
std::optional<HeldSlot> take_claim(ClaimedSlots& claimed, const model::RolloutTarget& target,
                                   std::chrono::steady_clock::time_point now, bool usable) {
    auto found = claimed.find(target.shim);
    if (found == claimed.end()) {
        return std::nullopt;
    }
    const model::RolloutTarget& had = found->second.target;
    const bool young = now - found->second.adopted <= model::slot_timing::claim_usable_for;
    if (had.uid != target.uid || had.generation != target.generation || young != usable) {
        return std::nullopt;
    }
    HeldSlot held = std::move(found->second);
    claimed.erase(found);
    return held;
}

} // namespace

std::optional<HeldSlot> use_claimed(ClaimedSlots& claimed, const model::RolloutTarget& target,
                                    std::chrono::steady_clock::time_point now) {
    auto held = take_claim(claimed, target, now, true);
    if (held) {
        held->target = target; // the slot count may have changed since
    }
    return held;
}

std::optional<HeldSlot> take_expired_claim(ClaimedSlots& claimed,
                                           const model::RolloutTarget& target,
                                           std::chrono::steady_clock::time_point now) {
    return take_claim(claimed, target, now, false);
}

util::Expected<std::unique_ptr<RolloutGate>>
RolloutGate::create(const ClusterSource& cluster, const store::Store& store, const util::Log& log,
                    const model::SlotBoard* watched, std::chrono::seconds longest_commit,
                    ClaimedSlots claimed) {
    if (!cluster.last_reading()) {
        return nullptr;
    }
    // In the reconcile's pass (request_bound.hpp): every take, release and failure marking pings
    // the watchdog first, and after the pass's first unanswered request a take or a release is
    // not asked (the slot waits, or expires on its own).
    auto client = TRY(cluster.client());
    return std::unique_ptr<RolloutGate>(new RolloutGate(
        cluster, store, log, std::move(client), watched, longest_commit, std::move(claimed)));
}

RolloutGate::RolloutGate(const ClusterSource& cluster, const store::Store& store,
                         const util::Log& log, kubeapi::Client client,
                         const model::SlotBoard* watched, std::chrono::seconds longest_commit,
                         ClaimedSlots claimed)
    : m_cluster(cluster), m_store(store), m_log(log), m_client(std::move(client)),
      m_watched(watched), m_longest_commit(longest_commit), m_claimed(std::move(claimed)) {}

RolloutGate::~RolloutGate() {
    // A reconcile that ended before its report (the store unreadable after the transaction):
    // the slots go now rather than when their leases run out.
    try {
        release_kept_on_their_own("the Node report did not come");
    } catch (const std::exception& error) {
        m_log.warning(std::string("rollout: releasing slots: ") + error.what());
    }
}

util::Expected<spec::DesiredShims> RolloutGate::admit(const spec::DesiredShims& desired) {
    const ClusterReading& reading = *m_cluster.last_reading();
    const store::StoreState state = TRY(m_store.load_state());
    const std::vector<SlotNeed> needs = slot_needs(reading, desired, state);
    const std::string& me = m_cluster.node_name();
    SlotKeeper keeper(m_client, m_cluster.settings().namespace_name, me);
    // Tests only (fault.hpp): every claim looks too old to use as it is, as when the reconcile
    // starts long after the watch took the slot (a loaded machine or API server).
    const auto now = std::chrono::steady_clock::now() + (reconcile::fault_switch("claims-age")
                                                             ? model::slot_timing::claim_usable_for
                                                             : std::chrono::milliseconds(0));
    std::map<std::string, HeldSlot> expired; // taken again below, from the watched grants
    for (const SlotNeed& need : needs) {
        if (need.target && reading.live) {
            if (auto claimed = use_claimed(m_claimed, *need.target, now)) {
                m_held.push_back(std::move(*claimed));
            } else if (auto old = take_expired_claim(m_claimed, *need.target, now)) {
                m_log.info("rollout: slot " + kubeapi::name_of(old->lease) + " of Shim/" +
                               need.shim +
                               " was claimed too long ago to use as its watch showed it: taking "
                               "its grant again",
                           {.shim = need.shim});
                expired.emplace(need.shim, std::move(*old));
            }
        }
    }
    release_unclaimed(keeper);
    if (needs.empty()) {
        return desired;
    }
    // Only slots granted to this node, by the coordinator (slot_grant.hpp). The daemon has them
    // from its watch; while that watch is closed (idle) or starting, every slotted change waits
    // for it, and the daemon opens it (agent_watches.hpp). `apply` lists them once, and when a
    // Shim has none asks and waits for it a while (ask_and_list_grants). An API server that does
    // not answer holds every slotted change back (below).
    std::vector<model::SlotSeen> slots;
    const bool granted = m_watched != nullptr;
    const bool watch_ready = granted && m_watched->synced();
    // Never a grant this node's entry says done with, whichever process of the node gave it back.
    if (watch_ready) {
        // This node's own, judged by its Node as the daemon's watch shows it.
        slots = model::without_given_back(m_watched->slots(), reading.view.node);
    } else if (!granted && reading.live) {
        slots = TRY(ask_and_list_grants(needs)); // judged by its Node read under the node lock
    }
    release_stale_grants(keeper, slots, needs);
    std::set<std::string> held_back;
    for (const SlotNeed& need : needs) {
        if (std::any_of(m_held.begin(), m_held.end(),
                        [&](const HeldSlot& held) { return held.target.shim == need.shim; })) {
            continue; // claimed by the daemon before this reconcile
        }
        bool halted = false;
        if (!reading.live) {
            m_waiting[need.shim] = "the API server does not answer: no rollout slot can be taken";
        } else if (!need.target) {
            m_waiting[need.shim] = need.why_unresolved;
        } else if (granted && !watch_ready) {
            m_waiting[need.shim] =
                m_watched->refused().empty()
                    ? "waiting for the watch on this node's rollout slots to sync"
                    : "the API server refuses " + m_watched->refused() +
                          " (deploy/ lets node identities read the slot Leases of namespace " +
                          m_cluster.settings().namespace_name + ": README, \"Cluster mode\")";
        } else {
            const ShimSeen* shim = reading.find(need.shim);
            const model::SlotDecision decision = model::decide_granted_slot(
                slots, *need.target, me,
                shim ? model::rollout_halted_message(shim->object) : std::string());
            if (decision.kind == model::SlotDecision::Kind::hold) {
                // A view of unknown age (the board after the loop was held up, apply's list):
                // taken at once, before the Node may say `installing` (slot_keeper.hpp).
                auto taken = keeper.take(*need.target, decision);
                if (!taken) {
                    m_waiting[need.shim] = taken.error().message();
                } else if (*taken) {
                    m_log.info("rollout: took slot " +
                                   model::slot_lease_name(need.shim, decision.index) +
                                   " for Shim/" + need.shim + " generation " +
                                   std::to_string(need.target->generation),
                               {.shim = need.shim});
                    m_held.push_back(std::move(**taken));
                    continue;
                } else {
                    m_waiting[need.shim] = why_not_taken(need.shim, decision);
                }
            } else {
                m_waiting[need.shim] = decision.why;
                halted = decision.kind == model::SlotDecision::Kind::halted;
            }
        }
        held_back.insert(need.shim);
        m_waiting_for[need.shim] = need.target;
        if (const spec::ShimSpec* want = desired_from(desired, need.shim); want && !halted) {
            m_worth_staging.push_back(*want);
        }
    }
    release_expired_claims_not_taken_again(keeper, expired);
    if (!m_held.empty()) {
        m_renewal = std::make_unique<SlotRenewal>(
            m_client.connection().config(), m_cluster.settings().namespace_name, me, m_held, m_log);
    }
    if (reconcile::fault_switch("slot-wait")) {
        m_log.warning("rollout: SHIMKEEPER_FAULT_SWITCH=slot-wait: changing every Shim without "
                      "waiting for its slot (a deliberately broken build)");
        return desired;
    }
    return held_back_desired(desired, state, held_back);
}

std::string RolloutGate::why_not_taken(const std::string& shim,
                                       const model::SlotDecision& decision) const {
    const std::string slot =
        "rollout slot " + model::slot_lease_name(shim, decision.index) + " of Shim/" + shim;
    const auto given_back = SlotKeeper::given_back(decision.existing->lease);
    if (!given_back) {
        return slot + " was no longer this node's when it took it";
    }
    // Until the coordinator frees it, the grant is still in view: say why it went back.
    return slot + " was given back by this node" +
           (given_back->empty() ? std::string() : " after: " + *given_back) +
           "; it waits for the coordinator to free it and grant a slot anew";
}

// A grant of this node's for an older generation goes back at once: a grant is of one generation,
// and the coordinator grants this node nothing more while it holds a slot of the Shim.
void RolloutGate::release_stale_grants(SlotKeeper& keeper,
                                       const std::vector<model::SlotSeen>& slots,
                                       const std::vector<SlotNeed>& needs) {
    for (const SlotNeed& need : needs) {
        if (!need.target) {
            continue;
        }
        for (const model::SlotSeen* stale :
             model::own_stale_grants(slots, *need.target, m_cluster.node_name())) {
            auto released = keeper.release(held_of(stale->lease));
            if (!released) {
                m_log.warning("rollout: " + released.error().message());
            } else {
                m_log.info("rollout: released slot " + stale->lease.name + " of generation " +
                               std::to_string(stale->lease.generation) + ": Shim/" + need.shim +
                               " is at generation " + std::to_string(need.target->generation),
                           {.shim = need.shim});
            }
        }
    }
}

// `apply` (no daemon, no watch): its own grants, listed; for the Shims with none it asks on
// its Node and lists again every second, for one lease at most (a grant that comes later is
// freed unused by the coordinator).
util::Expected<std::vector<model::SlotSeen>>
RolloutGate::ask_and_list_grants(const std::vector<SlotNeed>& needs) {
    const std::string& me = m_cluster.node_name();
    const std::string& ns = m_cluster.settings().namespace_name;
    // The Node read again, not apply's reading: that one was taken before the node lock, and the
    // daemon's reconcile it waited for may have given a grant back since. Every give-back is
    // written by a reconcile that holds the lock, so this read (a quorum read) shows them all.
    auto node = m_client.get(kubeapi::nodes_resource(), "", me);
    if (!node) {
        return std::unexpected(std::move(node.error()).with_context("reading Node " + me));
    }
    const auto list = [&]() -> util::Expected<std::vector<model::SlotSeen>> {
        return model::without_given_back(TRY(read_own_grants(m_client, ns, me)).slots(), *node);
    };
    std::vector<model::SlotSeen> slots = TRY(list());
    const auto ungranted = [&] {
        model::SlotRequests asked;
        for (const SlotNeed& need : needs) {
            if (need.target && !model::own_slot_decision(slots, *need.target, me) &&
                !model::failed_slot(slots, *need.target)) {
                asked[need.shim] =
                    model::SlotRequest{need.target->uid, need.target->generation,
                                       kubeapi::micro_time(std::chrono::system_clock::now())};
            }
        }
        return asked;
    };
    model::SlotRequests asked = ungranted();
    if (asked.empty()) {
        return slots;
    }
    model::SlotRequests requests =
        model::slot_requests_of(model::shim_keys_of(*node).slot_requests);
    for (auto& [shim, request] : asked) {
        requests[shim] = request;
    }
    json patch = {
        {"metadata",
         {{"annotations", {{model::k_slot_requests_key, model::format_slot_requests(requests)}}}}}};
    auto patched = m_client.merge_patch(kubeapi::nodes_resource(), "", me, patch);
    if (!patched) {
        return std::unexpected(
            std::move(patched.error()).with_context("asking for a rollout slot on Node " + me));
    }
    m_log.info("rollout: asked the coordinator for a rollout slot; waiting for it up to " +
               std::to_string(model::slot_timing::free_after.count()) + " s");
    const auto until = std::chrono::steady_clock::now() + model::slot_timing::free_after;
    while (!ungranted().empty() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::seconds(1)); // a poll: apply has no watch
        slots = TRY(list());
    }
    return slots;
}

// A claimed slot this reconcile does not use (the Shim changed or went meanwhile, or the claim is
// too old to trust) goes back at once rather than blocking others until it expires.
void RolloutGate::release_unclaimed(SlotKeeper& keeper) {
    for (const auto& [shim, claimed] : m_claimed) {
        m_held_shims.insert(shim);
        const std::string slot = kubeapi::name_of(claimed.lease);
        if (auto released = keeper.release(claimed); !released) {
            m_log.warning("rollout: " + released.error().message());
        } else {
            m_log.info("rollout: released slot " + slot + ", claimed for Shim/" + shim +
                           " but no longer needed by this reconcile",
                       {.shim = shim});
        }
    }
    m_claimed.clear();
}

// An expired claim whose grant could not be taken again (the watch not synced, the API server
// silent, the grant withdrawn or halted) goes back at once, as an unwanted claim does.
void RolloutGate::release_expired_claims_not_taken_again(
    SlotKeeper& keeper, const std::map<std::string, HeldSlot>& expired) {
    for (const auto& [shim, held] : expired) {
        if (std::ranges::any_of(m_held,
                                [&](const HeldSlot& taken) { return taken.target.shim == shim; })) {
            continue;
        }
        m_held_shims.insert(shim);
        if (auto released = keeper.release(held); !released) {
            m_log.warning("rollout: " + released.error().message());
        } else {
            m_log.info("rollout: released slot " + kubeapi::name_of(held.lease) +
                           ", claimed for Shim/" + shim + " too long ago and not taken again",
                       {.shim = shim});
        }
    }
}

std::set<std::string> shims_to_halt(const util::Expected<reconcile::Outcome>& outcome,
                                    const std::vector<std::string>& refused_about) {
    if (outcome && outcome->exit_code() == 0) {
        return {};
    }
    const std::vector<std::string>& blamed = outcome ? outcome->blamed : refused_about;
    return {blamed.begin(), blamed.end()};
}

void RolloutGate::attach(reconcile::Node& node, ReportCarrying report) {
    node.before_change =
        [this, earlier = std::move(node.before_change),
         report = std::move(report)](const reconcile::NodePlan& plan,
                                     const store::StoreState& state) -> util::Expected<void> {
        // Before the Node report (a node without a slot does not say `installing`), after it
        // (that is a request, and may take long), and once more after the write-ahead
        // (recheck_before_change): the last check is as close to the first change as it gets.
        TRY(confirm_fresh_slots());
        if (report && m_renewal) {
            if (TRY(report_with_committing_marks(report, plan, state))) {
                return refuse_unless_every_slot(m_renewal->held(), why_slot_not_committed);
            }
            return mark_slots_committing();
        }
        if (earlier) { // without slots held, the report is all there is to send
            TRY(earlier(plan, state));
        }
        return mark_slots_committing();
    };
    node.recheck_before_change = [this]() -> util::Expected<void> {
        TRY(confirm_fresh_slots());
        if (m_renewal) {
            m_renewal->changes_begun(); // no freshness is checked after this one
        }
        return {};
    };
    node.refused_about = [this](const std::vector<std::string>& shims) {
        m_refused_about = shims;
    };
}

util::Expected<void> RolloutGate::confirm_fresh_slots() {
    if (!m_renewal) {
        return {};
    }
    return refuse_unless_every_slot(m_renewal->held(), why_slot_not_fresh);
}

util::Expected<void> RolloutGate::mark_slots_committing() {
    if (!m_renewal) {
        return {};
    }
    // Waiting longer than the trust window is pointless: a mark confirmed later is stale anyway.
    return refuse_unless_every_slot(
        m_renewal->renew_committing(m_longest_commit, model::slot_timing::fresh_for),
        why_slot_not_committed);
}

util::Expected<bool> RolloutGate::report_with_committing_marks(const ReportCarrying& report,
                                                               const reconcile::NodePlan& plan,
                                                               const store::StoreState& state) {
    // No renewal round may run meanwhile: one sent without the mark and answered after the
    // report would take the mark off the Node again. A round takes milliseconds on a healthy
    // API server; one still in flight after a second leaves the mark to a write of its own
    // (mark_slots_committing, with its own bound).
    SlotRenewal::Paused paused = m_renewal->pause(std::chrono::seconds(1));
    if (!paused.holds_rounds_off()) {
        m_log.debug("rollout: a renewal round of the slots is still on its way: the committing "
                    "mark goes in a write of its own after the Node report");
        TRY(report(plan, state, {}));
        return false;
    }
    std::vector<HeldSlot> held = paused.held();
    std::vector<model::SlotHold> entries;
    for (HeldSlot& slot : held) {
        slot.committing = std::max(slot.committing, m_longest_commit);
        if (!slot.gone) {
            entries.push_back(SlotKeeper::renewed_hold(slot));
        }
    }
    const auto sent = std::chrono::steady_clock::now();
    if (!TRY(report(plan, state, entries))) {
        return false;
    }
    SlotKeeper keeper(m_client, m_cluster.settings().namespace_name, m_cluster.node_name());
    auto entry = entries.begin();
    for (HeldSlot& slot : held) {
        if (slot.gone) {
            continue;
        }
        // As a renewal round does: a grant no longer this node's is said in `lost`, and
        // refuse_unless_every_slot() then stops the transaction.
        if (auto confirmed = keeper.confirm_written(slot, *entry++, sent); !confirmed) {
            m_log.warning("rollout: " + confirmed.error().message(), {.shim = slot.target.shim});
        }
    }
    paused.committed(std::move(held), m_longest_commit);
    return true;
}

util::Expected<void> RolloutGate::refuse_unless_every_slot(
    const std::vector<HeldSlot>& slots,
    std::optional<std::string> (*why_not)(const HeldSlot&, std::chrono::steady_clock::time_point)) {
    const auto now = std::chrono::steady_clock::now();
    for (const HeldSlot& held : slots) {
        if (auto why = why_not(held, now)) {
            const std::string message = "not changing Shim/" + held.target.shim + " generation " +
                                        std::to_string(held.target.generation) + ": " + *why +
                                        "; the node stays as it is and waits for a slot again";
            // Not a failure of the Shim: it waits, and what the Node says of it stays true.
            m_waiting[held.target.shim] = message;
            m_waiting_for[held.target.shim] = held.target;
            m_log.warning("rollout: " + message, {.shim = held.target.shim});
            return util::fail(util::ErrorCode::conflict, message);
        }
    }
    return {};
}

void RolloutGate::finish(const util::Expected<reconcile::Outcome>& outcome,
                         bool release_with_report) {
    const std::shared_ptr<kubeapi::ApiPass> pass = m_client.pass();
    if (m_renewal) {
        // The join waits for at most the renewal's request in flight (it asks nothing more once
        // stopped): one bound, after a ping.
        if (pass) {
            pass->ping();
        }
        m_held = m_renewal->stop();
        m_renewal.reset();
    }
    SlotKeeper keeper(m_client, m_cluster.settings().namespace_name, m_cluster.node_name());
    // A failure is marked even when an earlier request of the reconcile got no answer (a halt
    // lost is a rollout going on over a failing Shim), in a pass of its own: pinged before each
    // request, given up after its own first unanswered one.
    std::shared_ptr<kubeapi::ApiPass> marking;
    const bool ok = outcome && outcome->exit_code() == 0;
    const std::set<std::string> halting = shims_to_halt(outcome, m_refused_about);
    for (const HeldSlot& held : m_held) {
        m_held_shims.insert(held.target.shim);
        const std::string slot = kubeapi::name_of(held.lease);
        const std::string what =
            "Shim/" + held.target.shim + " generation " + std::to_string(held.target.generation);
        if (ok || !halting.contains(held.target.shim)) {
            const std::string done =
                ok ? what + " done here"
                   : what + " not changed here (the failure is not about it: its rollout goes on)";
            if (!ok) {
                // Not failed: it waits for a slot again, and what the Node says of it stays true.
                m_waiting.try_emplace(held.target.shim,
                                      what + " waits: the transaction failed, not because of it");
                m_waiting_for.try_emplace(held.target.shim, held.target);
            }
            if (release_with_report) {
                m_kept_releases.push_back({held, done});
                continue;
            }
            auto released = keeper.release(held);
            if (released) {
                m_log.info("rollout: " + done + "; released slot " + slot,
                           {.shim = held.target.shim});
            } else {
                // It expires on its own within one lease duration.
                m_log.warning("rollout: " + done + "; " + released.error().message(),
                              {.shim = held.target.shim});
            }
            continue;
        }
        const std::string reason = outcome ? outcome->reason : outcome.error().message();
        if (pass && !marking) {
            marking = pass->sibling();
        }
        m_client.join_pass(marking);
        auto marked = keeper.fail(held, reason);
        m_client.join_pass(pass);
        m_log.error("rollout: " + what + " failed here (" + reason + "); " +
                        (marked
                             ? "said so on this Node for slot " + *marked +
                                   ": the coordinator marks it failed and the rollout halts"
                             : "slot " + slot + " not marked failed: " + marked.error().message()),
                    {.shim = held.target.shim});
    }
    m_held.clear();
}

std::vector<model::SlotHold> RolloutGate::take_releases() {
    std::vector<model::SlotHold> out;
    for (const KeptRelease& kept : m_kept_releases) {
        out.push_back(SlotKeeper::released_hold(kept.held));
    }
    return out;
}

void RolloutGate::report_released(const util::Expected<void>& told) {
    if (!told) {
        release_kept_on_their_own("the Node report failed: " + told.error().message());
        return;
    }
    for (const KeptRelease& kept : m_kept_releases) {
        m_log.info("rollout: " + kept.done + "; released slot " +
                       kubeapi::name_of(kept.held.lease) + " with the Node report",
                   {.shim = kept.held.target.shim});
    }
    m_kept_releases.clear();
}

void RolloutGate::release_kept_on_their_own(const std::string& why) {
    if (m_kept_releases.empty()) {
        return;
    }
    SlotKeeper keeper(m_client, m_cluster.settings().namespace_name, m_cluster.node_name());
    for (const KeptRelease& kept : m_kept_releases) {
        const std::string slot = kubeapi::name_of(kept.held.lease);
        if (auto released = keeper.release(kept.held)) {
            m_log.info("rollout: " + kept.done + "; released slot " + slot + " (" + why + ")",
                       {.shim = kept.held.target.shim});
        } else {
            // It expires on its own within one lease duration.
            m_log.warning("rollout: " + kept.done + "; " + released.error().message(),
                          {.shim = kept.held.target.shim});
        }
    }
    m_kept_releases.clear();
}

} // namespace shimkeeper::cluster::agent
