#include "shimkeeper/cluster/coordinator/coordinator_pass.hpp"

#include "shimkeeper/cluster/coordinator/slot_reclaim_wait.hpp"
#include "shimkeeper/cluster/model/grant_targets.hpp"
#include "shimkeeper/cluster/model/node_scope.hpp"
#include "shimkeeper/cluster/model/rollout_policy.hpp"
#include "shimkeeper/cluster/model/rollout_status.hpp"
#include "shimkeeper/cluster/model/runtime_class.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/cluster/model/shim_rollup.hpp"
#include "shimkeeper/kubeapi/conflict_retry.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/reconcile/fault.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <algorithm>
#include <span>
#include <thread>

namespace shimkeeper::cluster::coordinator {

using nlohmann::json;

namespace {

std::string version_of(const json& object) {
    return object.value("metadata", json::object()).value("resourceVersion", "");
}

bool deleting(const json& object) {
    return object.value("metadata", json::object()).contains("deletionTimestamp");
}

bool has_finalizer(const json& shim) {
    const json finalizers = shim.value("metadata", json::object()).value("finalizers", json());
    return finalizers.is_array() &&
           std::ranges::find(finalizers, json(k_uninstall_finalizer)) != finalizers.end();
}

std::string condition_reason(const json& shim, const std::string& type) {
    const json conditions = shim.value("status", json::object()).value("conditions", json());
    const json* found = model::find_condition(conditions, type);
    return found != nullptr ? found->value("reason", "") : "";
}

} // namespace

void CoordinatorPass::begin(ClusterView& view, TermMemory& term) {
    m_outcome = {};
    m_view = &view;
    m_term = &term;
    m_freeing.clear();
    m_unrecorded.clear();
}

PassOutcome CoordinatorPass::run(ClusterView& view, TermMemory& term) {
    begin(view, term);
    if (m_leading()) {
        record_failures(); // before the status: a halt shows in the same pass
    }
    std::vector<std::string> names;
    for (const auto& [name, shim] : view.shims) {
        names.push_back(name);
    }
    for (const std::string& name : names) {
        if (!m_leading()) {
            m_outcome.interrupted = true;
            return m_outcome;
        }
        if (api_silent()) {
            return m_outcome;
        }
        if (auto found = view.shims.find(name); found != view.shims.end()) {
            const json shim = found->second; // a copy: writes replace the view's
            reconcile_shim(shim);
        }
    }
    if (m_leading() && !api_silent()) {
        remove_orphans();
        reclaim_slots();
    }
    if (m_leading() && !api_silent()) {
        grant_slots(" (in a pass)");
    }
    if (m_leading() && !api_silent()) {
        delete_unclaimed_slots();
    }
    return m_outcome;
}

PassOutcome CoordinatorPass::run_grants(ClusterView& view, TermMemory& term,
                                        const std::string& when) {
    begin(view, term);
    if (m_leading()) {
        record_failures(); // a failure that came with the events halts before a grant
        if (!api_silent()) {
            reclaim_slots(); // a slot its node released goes at once
        }
        if (m_leading() && !api_silent()) {
            grant_slots(when);
        }
        if (m_leading() && !api_silent()) {
            delete_unclaimed_slots();
        }
    } else {
        m_outcome.interrupted = true;
    }
    return m_outcome;
}

void CoordinatorPass::reconcile_shim(const json& shim) {
    const bool ours = has_finalizer(shim);
    if (deleting(shim)) {
        if (!ours) {
            return; // finalized already, or held by someone else: nothing of ours to do
        }
        model::Rollup nodes = model::rollup(shim, m_view->nodes);
        m_outcome.nodes[kubeapi::name_of(shim)] = nodes.counts;
        if (nodes.carrying.empty()) {
            finalize(shim);
        } else {
            write_status(shim, with_rollout(shim, nodes,
                                            model::desired_status(shim, nodes, std::nullopt,
                                                                  util::now_rfc3339())));
        }
        return;
    }
    if (!ours) {
        if (auto added = change_finalizer(shim, true); !added) {
            failed("adding the finalizer to Shim " + kubeapi::name_of(shim),
                   std::move(added).error());
        }
    }
    std::optional<model::Condition> runtime_class = ensure_runtime_class(shim);
    const model::Rollup nodes =
        model::rollup(shim, m_view->nodes,
                      m_view->write_refusals.for_shim(kubeapi::name_of(shim),
                                                      model::WriteRefusals::Clock::now()));
    m_outcome.nodes[kubeapi::name_of(shim)] = nodes.counts;
    write_status(
        shim, with_rollout(shim, nodes,
                           model::desired_status(shim, nodes, runtime_class, util::now_rfc3339())));
    if (runtime_class && runtime_class->reason == "Conflict" &&
        condition_reason(shim, "RuntimeClassReady") != "Conflict") {
        emit(shim, kubeapi::EventType::warning, "RuntimeClassConflict", "CreateRuntimeClass",
             runtime_class->message);
    }
}

std::optional<model::Condition> CoordinatorPass::ensure_runtime_class(const json& shim) {
    auto identity = model::shim_identity_of(shim);
    if (!identity) {
        // Admission refuses these; a Shim made under an older CRD can still get here.
        return model::Condition{"RuntimeClassReady", model::ConditionStatus::false_, "InvalidSpec",
                                identity.error().message()};
    }
    const json desired = model::desired_runtime_class(*identity, shim);
    const std::string& name = identity->runtime_class;
    auto& classes = m_view->runtime_classes;
    auto found = classes.find(name);
    const json* existing = found == classes.end() ? nullptr : &found->second;
    model::RuntimeClassPlan plan = model::plan_runtime_class(existing, desired, *identity);
    const kubeapi::Resource resource = kubeapi::runtime_classes_resource();
    util::Expected<json> result = json();
    switch (plan.action) {
    case model::RuntimeClassPlan::Action::keep:
    case model::RuntimeClassPlan::Action::conflict:
    case model::RuntimeClassPlan::Action::invalid:
        return plan.condition;
    case model::RuntimeClassPlan::Action::patch:
        result = m_client.json_patch(resource, "", name, plan.operations, version_of(*existing));
        break;
    case model::RuntimeClassPlan::Action::replace:
        if (!delete_runtime_class(*existing, "its handler changed")) {
            return std::nullopt;
        }
        [[fallthrough]];
    case model::RuntimeClassPlan::Action::create:
        result = m_client.create(resource, "", desired);
        if (result) {
            emit(shim, kubeapi::EventType::normal, "RuntimeClassCreated", "CreateRuntimeClass",
                 plan.condition.message);
        }
        break;
    }
    if (!result) {
        // A conflict here means our view is behind; the watch brings the news, the retry acts.
        failed("writing RuntimeClass " + name + " for Shim " + identity->name,
               std::move(result).error());
        return std::nullopt;
    }
    ++m_outcome.writes;
    classes[name] = std::move(*result);
    return plan.condition;
}

bool CoordinatorPass::delete_runtime_class(const json& runtime_class, const std::string& why) {
    const std::string name = kubeapi::name_of(runtime_class);
    auto gone =
        m_client.remove(kubeapi::runtime_classes_resource(), "", name, version_of(runtime_class));
    if (!gone && gone.error().code() != util::ErrorCode::not_found) {
        failed("deleting RuntimeClass " + name + " (" + why + ")", std::move(gone).error());
        return false;
    }
    ++m_outcome.writes;
    m_view->runtime_classes.erase(name);
    m_log.info("coordinator: deleted RuntimeClass " + name + ": " + why);
    return true;
}

void CoordinatorPass::finalize(const json& shim) {
    const std::string shim_name = kubeapi::name_of(shim);
    std::string removed;
    const auto classes = m_view->runtime_classes; // a copy: deleting changes the view
    for (const auto& [name, runtime_class] : classes) {
        if (model::runtime_class_owner(runtime_class) != shim_name) {
            continue;
        }
        if (!delete_runtime_class(runtime_class, "Shim " + shim_name + " was deleted")) {
            return; // the finalizer stays until the RuntimeClass is gone
        }
        removed += (removed.empty() ? "RuntimeClass " : ", ") + name;
    }
    auto dropped = change_finalizer(shim, false);
    if (!dropped) {
        failed("removing the finalizer of Shim " + shim_name, std::move(dropped).error());
        return;
    }
    if (*dropped == kubeapi::Changed::no) {
        return; // gone already, or someone else took it off
    }
    m_log.info("coordinator: Shim " + shim_name + " finalized: no node carries it any more");
    emit(shim, kubeapi::EventType::normal, "Finalized", "Finalize",
         "no node carries the shim any more; " +
             (removed.empty() ? std::string("no RuntimeClass of ours to delete")
                              : removed + " deleted") +
             "; finalizer removed");
}

void CoordinatorPass::remove_orphans() {
    const auto classes = m_view->runtime_classes; // a copy: deleting changes the view
    for (const auto& [name, runtime_class] : classes) {
        const std::string owner = model::runtime_class_owner(runtime_class);
        if (owner.empty()) {
            continue;
        }
        auto shim = m_view->shims.find(owner);
        if (shim != m_view->shims.end()) {
            auto identity = model::shim_identity_of(shim->second);
            // A Shim being deleted keeps its RuntimeClass until finalize(); an invalid one
            // cannot say which class it wants, so nothing is taken from it.
            if (deleting(shim->second) || !identity || identity->runtime_class == name) {
                continue;
            }
        }
        delete_runtime_class(runtime_class, "Shim " + owner + " no longer names it");
    }
}

json CoordinatorPass::with_rollout(const json& shim, const model::Rollup& rollup, json status) {
    const model::RolloutStatus rollout =
        model::rollout_status(shim, rollup, m_view->slots, m_view->nodes);
    const json current = shim.value("status", json::object());
    // The slot count goes with the observedGeneration it is written beside, always: nodes trust
    // `slots` only for that generation (rollout_policy.hpp), so a count left from an older one
    // under a new observedGeneration would be the stale bound this rule exists to prevent.
    if (rollout.slots) {
        status["slots"] = *rollout.slots;
    } else if (current.contains("slots")) {
        status["slots"] = nullptr; // a merge patch deletes it
    }
    if (!m_view->slots_synced) {
        return status; // halted or not is judged once the slots are known
    }
    status["conditions"] = model::merge_conditions(status["conditions"], {rollout.halted},
                                                   rollup.generation, util::now_rfc3339());
    const json conditions_now = current.value("conditions", json()); // outlives `before`
    const json* before = model::find_condition(conditions_now, "RolloutHalted");
    if (rollout.halted.status == model::ConditionStatus::true_ &&
        (before == nullptr || before->value("status", "") != "True" ||
         before->value("observedGeneration", 0L) != rollup.generation)) {
        ++m_outcome.halts;
        emit(shim, kubeapi::EventType::warning, "RolloutHalted", "Rollout", rollout.halted.message);
    }
    return status;
}

void CoordinatorPass::reclaim_slots() {
    if (!m_view->slots_synced) {
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    const std::vector<model::SlotSeen> slots = m_view->slots; // writes replace the view's
    for (const model::SlotSeen& slot : slots) {
        if (!m_leading() || api_silent()) {
            return;
        }
        const auto shim = m_view->shims.find(slot.lease.shim);
        auto free = model::slot_reclaim_reason(
            slot, shim == m_view->shims.end() ? nullptr : &shim->second, now, slot_reclaim_wait());
        if (!free && shim != m_view->shims.end()) {
            if (auto why = model::foreign_failure_reason(slot, shim->second, m_view->nodes, now)) {
                free = model::SlotFree{*why, model::SlotFree::Action::delete_now};
            }
        }
        if (!free) {
            continue;
        }
        if (free->action == model::SlotFree::Action::revoke) {
            revoke_slot(slot, free->why);
            continue;
        }
        if (free->action == model::SlotFree::Action::delete_unless_renewed &&
            !holder_still_silent(slot)) {
            continue;
        }
        m_freeing.insert_or_assign(slot.lease.name, Freeing{slot, free->why});
    }
}

void CoordinatorPass::delete_unclaimed_slots() {
    if (m_freeing.empty()) {
        return;
    }
    // The deletes go together: a wave's slots are released within a moment of each other, and
    // one after another their deletes would keep the last of them from the next node for a round
    // trip per slot before it (bench/rollout: 0.6 s at maxUpdate 50). At the version judged: a
    // write in between makes this a 409, and it stays.
    std::vector<kubeapi::ApiClient::Removal> removals;
    for (const auto& [name, freeing] : m_freeing) {
        removals.push_back({name, freeing.slot.lease.resource_version});
    }
    auto results = m_client.remove_together(kubeapi::leases_resource(), m_view->ns, removals);
    std::size_t i = 0;
    for (const auto& [name, freeing] : m_freeing) {
        auto& gone = results[i++];
        if (!gone && gone.error().code() != util::ErrorCode::not_found) {
            if (gone.error().code() != util::ErrorCode::conflict) {
                failed("freeing rollout slot Lease " + name, std::move(gone).error());
            }
            continue;
        }
        ++m_outcome.writes;
        m_log.info("coordinator: freed rollout slot Lease " + name + ": " + freeing.why);
    }
    m_freeing.clear();
}

void CoordinatorPass::put_slot(const json& lease) {
    model::SlotSeen fresh{model::slot_lease_of(lease), std::chrono::steady_clock::now()};
    auto& slots = m_view->slots;
    const auto found = std::ranges::find(slots, fresh.lease.name,
                                         [](const model::SlotSeen& s) { return s.lease.name; });
    if (found != slots.end()) {
        if (found->lease.grant == fresh.lease.grant) { // a hand-over's holder has marked nothing
            fresh.lease.committing = found->lease.committing;
        }
        *found = std::move(fresh);
    } else {
        slots.push_back(std::move(fresh));
    }
}

// A slot Lease written back changed: false when it was not (a conflict or a deleted Lease is the
// next pass's, from the watch's newer version; anything else is this pass's failure).
bool CoordinatorPass::update_slot(const json& lease, const std::string& what) {
    auto written = m_client.update(kubeapi::leases_resource(), m_view->ns, lease);
    if (!written) {
        if (written.error().code() != util::ErrorCode::conflict &&
            written.error().code() != util::ErrorCode::not_found) {
            failed(what, std::move(written).error());
        }
        return false;
    }
    ++m_outcome.writes;
    put_slot(*written);
    return true;
}

void CoordinatorPass::revoke_slot(const model::SlotSeen& slot, const std::string& why) {
    json lease = slot.lease.object;
    const model::HoldSeen* judged = model::hold_of_grant(m_view->holds, slot.lease);
    json& annotations = lease["metadata"]["annotations"];
    annotations[model::k_slot_revoked_key] = why;
    annotations[model::k_slot_revoked_over_key] =
        judged != nullptr ? model::format_slot_hold(judged->hold) : std::string();
    if (!update_slot(lease, "revoking rollout slot Lease " + slot.lease.name)) {
        return;
    }
    m_log.info("coordinator: revoked rollout slot Lease " + slot.lease.name + ": " + why +
               "; it is freed " +
               std::to_string(
                   std::chrono::duration_cast<std::chrono::seconds>(model::slot_timing::revoked_for)
                       .count()) +
               " s from now unless its holder renews it meanwhile");
}

bool CoordinatorPass::holder_still_silent(const model::SlotSeen& slot) {
    const model::SlotLease& lease = slot.lease;
    if (reconcile::fault_switch("revoke-unchecked")) { // tests only (fault.hpp)
        return true;
    }
    auto node = m_client.get(kubeapi::nodes_resource(), "", lease.holder);
    std::optional<model::SlotHold> now_said;
    if (node) {
        const auto holds = model::slot_holds_in(
            model::metadata_strings(*node, "annotations", model::k_slot_hold_key_prefix));
        const auto entry = holds.find(lease.shim);
        if (entry != holds.end() && entry->second.grant == lease.grant) {
            now_said = entry->second;
        }
    } else if (node.error().code() != util::ErrorCode::not_found) {
        failed("reading Node " + lease.holder + " before freeing rollout slot Lease " + lease.name,
               std::move(node).error());
        return false;
    }
    const std::string text = now_said ? model::format_slot_hold(*now_said) : std::string();
    if (!now_said || text == lease.revoked_over || (now_said->done && now_said->failed.empty())) {
        return true; // silent since the revoke judged it, done with it, or on to another grant
    }
    // It renewed (or failed) after the view last showed it: the revoke goes, and the slot is
    // judged again from this entry, timed now.
    m_view->holds[lease.holder][lease.shim] =
        model::HoldSeen{*now_said, std::chrono::steady_clock::now()};
    json unrevoked = lease.object;
    json& annotations = unrevoked["metadata"]["annotations"];
    annotations.erase(model::k_slot_revoked_key);
    annotations.erase(model::k_slot_revoked_over_key);
    if (!update_slot(unrevoked, "withdrawing the revoke of rollout slot Lease " + lease.name)) {
        return false;
    }
    m_log.info("coordinator: withdrew the revoke of rollout slot Lease " + lease.name + ": node " +
               lease.holder + " wrote its entry for it since (" + text + ")");
    return false;
}

void CoordinatorPass::record_failures() {
    if (!m_view->slots_synced) {
        return;
    }
    // The failures point into this copy: recording one may add a slot to the view's.
    const std::vector<model::SlotSeen> slots = m_view->slots;
    model::GrantBook& book = m_term->grants;
    for (const model::FailureToRecord& failure : model::failures_to_record(
             slots, m_view->holds, m_view->nodes, m_view->shims, book.failures_recorded(),
             book.grants_seen(), std::chrono::steady_clock::now())) {
        const bool recorded =
            m_leading() && !api_silent() &&
            (failure.grant != nullptr ? mark_grant_failed(*failure.grant, failure.hold)
                                      : create_failed_marker(failure.node, failure.hold));
        if (!recorded) {
            m_unrecorded.push_back(failure.hold);
            continue;
        }
        book.record_failure(model::failure_key(failure.node, failure.hold));
        m_log.info("coordinator: node " + failure.node + " failed Shim/" + failure.hold.shim +
                   " generation " + std::to_string(failure.hold.generation) + " (" +
                   failure.hold.failed + "): recorded on its rollout slot; the rollout halts");
    }
}

bool CoordinatorPass::mark_grant_failed(const model::SlotSeen& grant, const model::SlotHold& hold) {
    json lease = grant.lease.object;
    json& annotations = lease["metadata"]["annotations"];
    annotations[model::k_slot_failed_key] = hold.failed;
    annotations.erase(model::k_slot_revoked_key); // a failed slot stands until a resume
    annotations.erase(model::k_slot_revoked_over_key);
    return update_slot(lease, "marking rollout slot Lease " + grant.lease.name + " failed");
}

// The grant is gone (revoked and freed while its holder was cut off): a failed Lease of that
// generation stands for it, under the first absent name from the grant's own index, then past
// the slot count's names, so that nothing waiting may take it for a free slot of the count.
bool CoordinatorPass::create_failed_marker(const std::string& node, const model::SlotHold& hold) {
    const int own = model::slot_index_of(hold.lease);
    constexpr int k_extra_names = 64;
    constexpr int k_first_extra = 1000;
    const model::RolloutTarget target{hold.shim, hold.uid, hold.generation, 1};
    for (int k = -1; k < k_extra_names; ++k) {
        const int index = k < 0 ? own : k_first_extra + k;
        const std::string name = model::slot_lease_name(hold.shim, index);
        if (index < 0 || std::ranges::any_of(m_view->slots, [&](const model::SlotSeen& slot) {
                return slot.lease.name == name;
            })) {
            continue;
        }
        json lease = model::slot_lease_for(target, index, node,
                                           kubeapi::micro_time(std::chrono::system_clock::now()));
        lease["metadata"]["namespace"] = m_view->ns;
        lease["metadata"]["annotations"][model::k_slot_failed_key] = hold.failed;
        lease["metadata"]["annotations"][model::k_slot_grant_key] = hold.grant;
        auto created = m_client.create(kubeapi::leases_resource(), m_view->ns, lease);
        if (created) {
            ++m_outcome.writes;
            put_slot(*created);
            return true;
        }
        if (created.error().code() != util::ErrorCode::conflict) {
            failed("creating a failed rollout slot Lease for node " + node + "'s failure of Shim/" +
                       hold.shim,
                   std::move(created).error());
            return false;
        }
    }
    failed("creating a failed rollout slot Lease for node " + node,
           util::Error(util::ErrorCode::conflict,
                       "every name up to " +
                           model::slot_lease_name(hold.shim, k_first_extra + k_extra_names - 1) +
                           " exists"));
    return false;
}

void CoordinatorPass::grant_slots(const std::string& when) {
    if (!m_view->slots_synced) {
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    std::vector<model::SlotSeen> slots;
    for (const model::SlotSeen& slot : m_view->slots) {
        if (!m_freeing.contains(slot.lease.name)) {
            slots.push_back(slot);
        }
    }
    // Only for Shims that select the node, or that it still carries (node_scope.hpp).
    const std::map<std::string, model::SlotRequests> requests =
        model::counted_slot_requests(m_view->nodes, m_view->shims);
    model::GrantBook& book = m_term->grants;
    book.settle(slots, m_view->slot_events, requests, now);
    const std::vector<model::GrantTarget> targets = model::grant_targets(
        m_view->shims, slots, m_view->nodes, m_unrecorded,
        {.grant_over_max = reconcile::fault_switch("grant-over-max"), // tests only (fault.hpp)
         .halt_ignored = reconcile::fault_switch("halt-ignored")});
    const auto batch_start = std::chrono::steady_clock::now();
    const std::vector<model::SlotGrant> planned =
        model::plan_slot_grants(targets, slots, requests, book.pending_grants(), book.served());
    for (std::size_t first = 0; first < planned.size(); first += k_grants_together) {
        if (!m_leading()) {
            m_outcome.interrupted = true;
            return;
        }
        // Never before the first group: a step that a loaded machine (or a long plan) kept past
        // the bound before its first write would grant nothing, pass after pass.
        if (first > 0 && std::chrono::steady_clock::now() - batch_start >= k_grant_batch_time) {
            m_outcome.grants_left = true; // decided again after the watches were read
            return;
        }
        if (reconcile::fault_switch("grant-slow")) { // tests only (fault.hpp)
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
        const std::span<const model::SlotGrant> group(
            planned.begin() + static_cast<std::ptrdiff_t>(first),
            std::min(k_grants_together, planned.size() - first));
        std::vector<json> leases;
        for (const model::SlotGrant& grant : group) {
            const std::string micro_now = kubeapi::micro_time(std::chrono::system_clock::now());
            const auto freed =
                m_freeing.find(model::slot_lease_name(grant.target.shim, grant.index));
            json lease =
                freed != m_freeing.end()
                    ? model::handed_over_slot_lease(grant, freed->second.slot.lease, micro_now)
                    : model::granted_slot_lease(grant, micro_now);
            lease["metadata"]["namespace"] = m_view->ns;
            leases.push_back(std::move(lease));
        }
        auto written = m_client.write_together(kubeapi::leases_resource(), m_view->ns, leases);
        for (std::size_t i = 0; i < group.size(); ++i) {
            const model::SlotGrant& grant = group[i];
            const std::string name = kubeapi::name_of(leases[i]);
            // Handed over, or changed since it was judged free: either way not to be deleted.
            const auto freed = m_freeing.extract(name);
            if (!written[i]) {
                // Exists, changed since judged, or (a hand-over) deleted meanwhile: the watch
                // brings the newer version.
                const util::ErrorCode code = written[i].error().code();
                if (code != util::ErrorCode::conflict &&
                    !(freed && code == util::ErrorCode::not_found)) {
                    failed("granting rollout slot Lease " + name, std::move(written[i]).error());
                }
                continue;
            }
            ++m_outcome.writes;
            ++m_outcome.grants;
            if (freed) { // one write freed it and granted it: the view has the new grant at once
                m_log.info("coordinator: freed rollout slot Lease " + name + ": " +
                           freed.mapped().why + "; handed over to node " + grant.node);
                put_slot(*written[i]);
            }
            book.record_grant(grant, requests.at(grant.node).at(grant.target.shim),
                              m_view->slot_events, now);
            m_log.info("coordinator: granted rollout slot " + name + " of Shim/" +
                       grant.target.shim + " generation " +
                       std::to_string(grant.target.generation) + " to node " + grant.node + when);
        }
    }
}

void CoordinatorPass::write_status(const json& shim, const json& status) {
    if (!model::status_differs(shim, status)) {
        return;
    }
    const std::string name = kubeapi::name_of(shim);
    const auto now = std::chrono::steady_clock::now();
    if (auto last = m_term->status_written.find(name);
        last != m_term->status_written.end() &&
        !model::status_differs_beyond_progress(shim, status)) {
        if (!model::progress_reached_another_step(shim, status)) {
            return; // written with the next step, or with anything more than progress
        }
        const auto due = last->second + model::k_progress_interval;
        if (now < due) {
            m_outcome.progress_due = std::min(m_outcome.progress_due.value_or(due), due);
            return;
        }
    }
    // The version this pass computed from is the patch's precondition (409 when stale): a term
    // that began before the last term's write landed (the old leader's request was abandoned
    // with its term, not stopped in the API server) would otherwise write the same conditions
    // again with a later lastTransitionTime, one Shim event for every agent, or older counts
    // over newer ones. The watch brings the newer object, and the pass
    // it wakes compares with that.
    // The view's version, not the copy's: this pass's own finalizer write moved it.
    const auto viewed = m_view->shims.find(name);
    const json& known = viewed != m_view->shims.end() ? viewed->second : shim;
    json patch{{"status", status}};
    const std::string version =
        known.value("metadata", json::object()).value("resourceVersion", std::string());
    if (!version.empty()) {
        patch["metadata"] = {{"resourceVersion", version}};
    }
    auto written = m_client.merge_patch(model::shims_resource(), "", name, patch, "status");
    if (!written) {
        if (written.error().code() == util::ErrorCode::conflict) {
            m_log.info("coordinator: Shim " + name + " changed since this pass read it (version " +
                       version + "); its status is written from the newer one");
            return;
        }
        if (written.error().code() != util::ErrorCode::not_found) { // gone: nothing to report on
            failed("writing the status of Shim " + name, std::move(written).error());
        }
        return;
    }
    ++m_outcome.writes;
    m_term->status_written[name] = now;
    if (!reconcile::fault_switch("shim-view-misses-status")) { // tests only (fault.hpp)
        m_view->shims[name] = std::move(*written);
    }
}

util::Expected<kubeapi::Changed> CoordinatorPass::change_finalizer(const json& shim, bool present) {
    kubeapi::Changed last = kubeapi::Changed::no;
    auto written = kubeapi::update_with_retry(
        m_client, model::shims_resource(), "", kubeapi::name_of(shim),
        [&](json& fresh) -> util::Expected<kubeapi::Changed> {
            json& metadata = fresh["metadata"];
            json finalizers = metadata.value("finalizers", json::array());
            auto at = std::ranges::find(finalizers, json(k_uninstall_finalizer));
            last = kubeapi::Changed::no;
            if (present && at == finalizers.end() && !metadata.contains("deletionTimestamp")) {
                finalizers.push_back(k_uninstall_finalizer);
                last = kubeapi::Changed::yes;
            } else if (!present && at != finalizers.end()) {
                finalizers.erase(at);
                last = kubeapi::Changed::yes;
            }
            metadata["finalizers"] = finalizers;
            return last;
        });
    if (!written) {
        if (written.error().code() == util::ErrorCode::not_found) {
            return kubeapi::Changed::no; // deleted meanwhile
        }
        return std::unexpected(std::move(written).error());
    }
    if (last == kubeapi::Changed::yes) {
        ++m_outcome.writes;
        // Without the last finalizer a deleted Shim is gone and the answer is a Status, not
        // the object: the view drops it before the watch says so.
        if (written->value("kind", "") == "Shim") {
            m_view->shims[kubeapi::name_of(shim)] = std::move(*written);
        } else {
            m_view->shims.erase(kubeapi::name_of(shim));
        }
    }
    return last;
}

void CoordinatorPass::emit(const json& shim, kubeapi::EventType type, const std::string& reason,
                           const std::string& action, const std::string& note) {
    const json metadata = shim.value("metadata", json::object());
    kubeapi::ObjectReference regarding{model::shims_resource().api_version(), "Shim",
                                       metadata.value("name", ""), "", metadata.value("uid", "")};
    if (auto emitted = m_events.emit(regarding, type, reason, action, note); !emitted) {
        m_log.warning("coordinator: could not record Event " + reason + " on Shim " +
                      regarding.name + ": " + emitted.error().message());
    }
}

bool CoordinatorPass::api_silent() {
    const std::shared_ptr<kubeapi::ApiPass>& pass = m_client.pass();
    if (!pass || !pass->no_answer()) {
        return false;
    }
    if (m_outcome.errors.empty()) { // an Event, whose failure is only logged
        failed("the pass", *pass->no_answer());
    }
    return true;
}

void CoordinatorPass::failed(const std::string& what, util::Error error) {
    m_log.warning("coordinator: " + what + ": " + error.message());
    m_outcome.errors.push_back(std::move(error).with_context(what));
}

} // namespace shimkeeper::cluster::coordinator
