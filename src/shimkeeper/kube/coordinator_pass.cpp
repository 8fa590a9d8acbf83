#include "shimkeeper/kube/coordinator_pass.hpp"

#include "shimkeeper/kube/conflict_retry.hpp"
#include "shimkeeper/kube/runtime_class.hpp"
#include "shimkeeper/kube/shim_rollup.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <algorithm>

namespace shimkeeper::kube {

using nlohmann::json;

namespace {

std::string name_of(const json& object) {
    return object.value("metadata", json::object()).value("name", "");
}

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

// Whether a write went through; the object it returns is not needed (the watch brings it).
util::Expected<void> written(util::Expected<json> result) {
    if (!result) {
        return std::unexpected(std::move(result).error());
    }
    return {};
}

std::string condition_reason(const json& shim, const std::string& type) {
    const json status = shim.value("status", json::object());
    const json* found = find_condition(status.value("conditions", json()), type);
    return found != nullptr ? found->value("reason", "") : "";
}

} // namespace

PassOutcome CoordinatorPass::run(const ClusterView& view) {
    m_outcome = {};
    for (const auto& [name, shim] : view.shims) {
        if (!m_leading()) {
            m_outcome.interrupted = true;
            return m_outcome;
        }
        reconcile_shim(shim, view);
    }
    if (m_leading()) {
        remove_orphans(view);
    }
    return m_outcome;
}

void CoordinatorPass::reconcile_shim(const json& shim, const ClusterView& view) {
    const bool ours = has_finalizer(shim);
    if (deleting(shim)) {
        if (!ours) {
            return; // finalized already, or held by someone else: nothing of ours to do
        }
        Rollup nodes = rollup(shim, view.nodes);
        if (nodes.carrying.empty()) {
            finalize(shim, view);
        } else {
            write_status(shim, desired_status(shim, nodes, std::nullopt, util::now_rfc3339()));
        }
        return;
    }
    if (!ours) {
        if (auto added = change_finalizer(shim, true); !added) {
            failed("adding the finalizer to Shim " + name_of(shim), std::move(added).error());
        }
    }
    std::optional<Condition> runtime_class = ensure_runtime_class(shim, view);
    json status =
        desired_status(shim, rollup(shim, view.nodes), runtime_class, util::now_rfc3339());
    write_status(shim, status);
    if (runtime_class && runtime_class->reason == "Conflict" &&
        condition_reason(shim, "RuntimeClassReady") != "Conflict") {
        emit(shim, EventType::warning, "RuntimeClassConflict", "CreateRuntimeClass",
             runtime_class->message);
    }
}

std::optional<Condition> CoordinatorPass::ensure_runtime_class(const json& shim,
                                                               const ClusterView& view) {
    auto identity = shim_identity_of(shim);
    if (!identity) {
        // Admission refuses these; a Shim made under an older CRD can still get here.
        return Condition{"RuntimeClassReady", ConditionStatus::false_, "InvalidSpec",
                         identity.error().message()};
    }
    const json desired = desired_runtime_class(*identity, shim);
    auto found = view.runtime_classes.find(identity->runtime_class);
    const json* existing = found == view.runtime_classes.end() ? nullptr : &found->second;
    RuntimeClassPlan plan = plan_runtime_class(existing, desired, *identity);
    const Resource resource = runtime_classes_resource();
    const std::string& name = identity->runtime_class;
    util::Expected<void> done;
    switch (plan.action) {
    case RuntimeClassPlan::Action::keep:
    case RuntimeClassPlan::Action::conflict:
        return plan.condition;
    case RuntimeClassPlan::Action::patch:
        done = written(
            m_client.json_patch(resource, "", name, plan.operations, version_of(*existing)));
        break;
    case RuntimeClassPlan::Action::replace:
        done = m_client.remove(resource, "", name, version_of(*existing));
        if (!done) {
            break;
        }
        ++m_outcome.writes;
        [[fallthrough]];
    case RuntimeClassPlan::Action::create:
        done = written(m_client.create(resource, "", desired));
        if (done) {
            emit(shim, EventType::normal, "RuntimeClassCreated", "CreateRuntimeClass",
                 plan.condition.message);
        }
        break;
    }
    if (!done) {
        // A conflict here means our view is behind; the watch brings the news, the retry acts.
        failed("writing RuntimeClass " + name + " for Shim " + identity->name,
               std::move(done).error());
        return std::nullopt;
    }
    ++m_outcome.writes;
    return plan.condition;
}

void CoordinatorPass::finalize(const json& shim, const ClusterView& view) {
    const std::string shim_name = name_of(shim);
    std::string removed;
    for (const auto& [name, runtime_class] : view.runtime_classes) {
        if (runtime_class_owner(runtime_class) != shim_name) {
            continue;
        }
        auto gone =
            m_client.remove(runtime_classes_resource(), "", name, version_of(runtime_class));
        if (!gone && gone.error().code() != util::ErrorCode::not_found) {
            failed("deleting RuntimeClass " + name + " of Shim " + shim_name,
                   std::move(gone).error());
            return; // the finalizer stays until the RuntimeClass is gone
        }
        ++m_outcome.writes;
        removed += (removed.empty() ? "RuntimeClass " : ", ") + name;
    }
    if (auto dropped = change_finalizer(shim, false); !dropped) {
        failed("removing the finalizer of Shim " + shim_name, std::move(dropped).error());
        return;
    }
    m_log.info("coordinator: Shim " + shim_name + " finalized: no node carries it any more");
    emit(shim, EventType::normal, "Finalized", "Finalize",
         "no node carries the shim any more; " +
             (removed.empty() ? std::string("no RuntimeClass of ours to delete")
                              : removed + " deleted") +
             "; finalizer removed");
}

void CoordinatorPass::remove_orphans(const ClusterView& view) {
    for (const auto& [name, runtime_class] : view.runtime_classes) {
        const std::string owner = runtime_class_owner(runtime_class);
        if (owner.empty()) {
            continue;
        }
        auto shim = view.shims.find(owner);
        if (shim != view.shims.end()) {
            auto identity = shim_identity_of(shim->second);
            // A Shim being deleted keeps its RuntimeClass until finalize(); an invalid one
            // cannot say which class it wants, so nothing is taken from it.
            if (deleting(shim->second) || !identity || identity->runtime_class == name) {
                continue;
            }
        }
        auto gone =
            m_client.remove(runtime_classes_resource(), "", name, version_of(runtime_class));
        if (!gone && gone.error().code() != util::ErrorCode::not_found) {
            failed("deleting RuntimeClass " + name + ", no longer wanted by Shim " + owner,
                   std::move(gone).error());
            continue;
        }
        ++m_outcome.writes;
        m_log.info("coordinator: deleted RuntimeClass " + name + ": Shim " + owner +
                   " no longer names it");
    }
}

void CoordinatorPass::write_status(const json& shim, const json& status) {
    if (!status_differs(shim, status)) {
        return;
    }
    auto written =
        m_client.merge_patch(shims_resource(), "", name_of(shim), {{"status", status}}, "status");
    if (!written) {
        if (written.error().code() != util::ErrorCode::not_found) { // gone: nothing to report on
            failed("writing the status of Shim " + name_of(shim), std::move(written).error());
        }
        return;
    }
    ++m_outcome.writes;
}

util::Expected<void> CoordinatorPass::change_finalizer(const json& shim, bool present) {
    Changed last = Changed::no;
    auto written = update_with_retry(
        m_client, shims_resource(), "", name_of(shim), [&](json& fresh) -> util::Expected<Changed> {
            json& metadata = fresh["metadata"];
            json finalizers = metadata.value("finalizers", json::array());
            auto at = std::ranges::find(finalizers, json(k_uninstall_finalizer));
            last = Changed::no;
            if (present && at == finalizers.end() && !metadata.contains("deletionTimestamp")) {
                finalizers.push_back(k_uninstall_finalizer);
                last = Changed::yes;
            } else if (!present && at != finalizers.end()) {
                finalizers.erase(at);
                last = Changed::yes;
            }
            metadata["finalizers"] = finalizers;
            return last;
        });
    if (!written) {
        if (written.error().code() == util::ErrorCode::not_found) {
            return {}; // deleted meanwhile
        }
        return std::unexpected(std::move(written).error());
    }
    if (last == Changed::yes) {
        ++m_outcome.writes;
    }
    return {};
}

void CoordinatorPass::emit(const json& shim, EventType type, const std::string& reason,
                           const std::string& action, const std::string& note) {
    const json metadata = shim.value("metadata", json::object());
    ObjectReference regarding{shims_resource().api_version(), "Shim", metadata.value("name", ""),
                              "", metadata.value("uid", "")};
    if (auto emitted = m_events.emit(regarding, type, reason, action, note); !emitted) {
        m_log.warning("coordinator: could not record Event " + reason + " on Shim " +
                      regarding.name + ": " + emitted.error().message());
    }
}

void CoordinatorPass::failed(const std::string& what, util::Error error) {
    m_log.warning("coordinator: " + what + ": " + error.message());
    m_outcome.errors.push_back(std::move(error).with_context(what));
}

} // namespace shimkeeper::kube
