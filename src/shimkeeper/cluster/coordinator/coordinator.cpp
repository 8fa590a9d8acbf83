#include "shimkeeper/cluster/coordinator/coordinator.hpp"

#include "shimkeeper/cluster/coordinator/slot_reclaim_wait.hpp"
#include "shimkeeper/cluster/model/node_scope.hpp"
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/micro_time.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/kubeapi/retry_backoff.hpp"
#include "shimkeeper/reconcile/fault.hpp"

#include <algorithm>
#include <thread>
#include <utility>

namespace shimkeeper::cluster::coordinator {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// A watch event applied to objects kept whole (Shims, RuntimeClasses: few and small).
void apply_event(std::map<std::string, json>& objects, const kubeapi::WatchEvent& event) {
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced:
        objects.clear();
        for (const json& item : event.items) {
            objects[kubeapi::name_of(item)] = item;
        }
        break;
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified:
        objects[kubeapi::name_of(event.object)] = event.object;
        break;
    case kubeapi::WatchEvent::Kind::deleted:
        objects.erase(kubeapi::name_of(event.object));
        break;
    }
}

// What a Node event changed for the coordinator.
struct NodeChange {
    bool seen = false;  // anything the coordinator reads
    bool asked = false; // a node asked for a slot anew (one event, not a fresh list)
};

// The same for Nodes, kept as views.
// Fault switch shim-view-misses-status: a Shim event that changes only the status (and the
// version) does not reach the view, which keeps the version a status write has moved past.
bool status_change_missed(const std::map<std::string, json>& shims,
                          const kubeapi::WatchEvent& event) {
    if (event.kind != kubeapi::WatchEvent::Kind::modified ||
        !reconcile::fault_switch("shim-view-misses-status")) {
        return false;
    }
    const auto known = shims.find(kubeapi::name_of(event.object));
    if (known == shims.end()) {
        return false;
    }
    const auto without_status = [](json object) {
        object.erase("status");
        object["metadata"].erase("resourceVersion");
        object["metadata"].erase("managedFields");
        return object;
    };
    return without_status(known->second) == without_status(event.object);
}

// What the event says of each node's slot entries, timed now (slot_view.hpp): after the views
// took it in.
// True when a node now says done or failed of a slot (model::stamp_holds).
bool stamp_holds_of(ClusterView& view, const kubeapi::WatchEvent& event) {
    if (reconcile::fault_switch("holds-unseen")) { // tests only (fault.hpp)
        return false;
    }
    const auto now = std::chrono::steady_clock::now();
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced: {
        std::erase_if(view.holds,
                      [&](const auto& entry) { return !view.nodes.contains(entry.first); });
        bool settled = false;
        for (const auto& [name, node] : view.nodes) {
            settled = model::stamp_holds(view.holds, node, now) || settled;
        }
        return settled;
    }
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified:
        if (const auto node = view.nodes.find(kubeapi::name_of(event.object));
            node != view.nodes.end()) {
            return model::stamp_holds(view.holds, node->second, now);
        }
        return false;
    case kubeapi::WatchEvent::Kind::deleted:
        view.holds.erase(kubeapi::name_of(event.object));
        return false;
    }
    return false;
}

// A node agent's Event about a refused or accepted write: whether it may change a status.
bool apply_write_events(model::WriteRefusals& refusals, const kubeapi::WatchEvent& event) {
    const auto now = Clock::now();
    const std::string oldest =
        kubeapi::micro_time(std::chrono::system_clock::now() - model::k_refusal_kept);
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced:
        refusals.replace_with(event.items, now, oldest);
        return true;
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified:
        if (auto seen = model::write_event_of(event.object)) {
            refusals.apply(*seen, now, oldest);
            return true;
        }
        return false;
    case kubeapi::WatchEvent::Kind::deleted:
        return false;
    }
    return false;
}

NodeChange apply_event(model::NodeViews& nodes, const kubeapi::WatchEvent& event) {
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced: {
        model::NodeViews fresh;
        for (const json& item : event.items) {
            model::NodeView view = model::NodeView::of(item);
            fresh.emplace(view.name, std::move(view));
        }
        bool changed = fresh != nodes;
        nodes = std::move(fresh);
        return {changed, false};
    }
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified: {
        model::NodeView view = model::NodeView::of(event.object);
        auto found = nodes.find(view.name);
        const model::NodeView* before = found == nodes.end() ? nullptr : &found->second;
        if (before != nullptr && *before == view) {
            return {};
        }
        const bool asked = model::asks_anew(before == nullptr ? model::SlotRequests{}
                                                              : model::slot_requests_on(*before),
                                            model::slot_requests_on(view));
        nodes[view.name] = std::move(view);
        return {true, asked};
    }
    case kubeapi::WatchEvent::Kind::deleted:
        return {nodes.erase(kubeapi::name_of(event.object)) > 0, false};
    }
    return {};
}

// Tests only (fault.hpp, pass-stalls): the first pass holds the loop for longer than the lease,
// as a write waiting on a hung API server would.
void stall_the_first_pass(const util::Log& log) {
    static bool stalled = false;
    if (std::exchange(stalled, true)) {
        return;
    }
    log.warning("coordinator: SHIMKEEPER_FAULT_SWITCH=pass-stalls: this pass holds the loop for "
                "17 s");
    std::this_thread::sleep_for(std::chrono::seconds(17));
    log.info("coordinator: the stalled pass goes on");
}

} // namespace

Coordinator::Coordinator(kubeapi::CurlEventLoop& loop, kubeapi::Client& client,
                         CoordinatorSettings settings, kubeapi::EventSource source, util::Log log)
    : m_loop(loop), m_client(client), m_settings(std::move(settings)), m_log(log),
      m_elector({m_settings.ns, m_settings.lease_name, m_settings.identity,
                 m_settings.lease_duration, m_settings.renew_deadline, m_settings.retry_period}),
      m_events(client, std::move(source)), m_rng(std::random_device{}()) {
    // A slot that changes may halt or resume a rollout: the leader's next pass says so.
    m_slots.set_listener([this](const std::string& shim, bool may_free) {
        if (m_leading) {
            on_change();
            if (may_free) {
                arm_grant_pass(GrantCause::slot_went);
            }
        }
        if (m_slot_listener) {
            m_slot_listener(shim, may_free);
        }
    });
}

Coordinator::~Coordinator() = default;

util::Expected<void> Coordinator::start() {
    if (m_settings.identity.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "the coordinator needs an identity (its holderIdentity in the Lease)");
    }
    if (m_settings.renew_deadline >= m_settings.lease_duration ||
        m_settings.retry_period >= m_settings.renew_deadline) {
        return util::fail(util::ErrorCode::invalid_input,
                          "coordinator lease timings must satisfy retry period < renew deadline "
                          "< lease duration");
    }
    TRY(watch_leases());
    auto timer = m_loop.after(std::chrono::milliseconds(0), [this] { round(); });
    if (!timer) {
        return std::unexpected(std::move(timer).error());
    }
    m_round_timer = std::move(*timer);
    return {};
}

util::Expected<void> Coordinator::watch_leases() {
    // Every Lease of the namespace: the election's and the rollout slots (slot_board.hpp), one
    // watch for both. A new watch lists first.
    m_slots_listed_this_term = false;
    m_lease_watch = std::make_unique<kubeapi::Watch>(
        m_client.connection(), m_loop, kubeapi::leases_resource(), m_settings.ns,
        kubeapi::WatchSettings{},
        [this](const kubeapi::WatchEvent& event) { on_lease_seen(event); });
    return m_lease_watch->start();
}

void Coordinator::on_lease_seen(const kubeapi::WatchEvent& event) {
    const bool behind_while_standing_by = // tests only (fault.hpp)
        !m_leading && event.kind != kubeapi::WatchEvent::Kind::synced &&
        kubeapi::name_of(event.object) != m_settings.lease_name &&
        reconcile::fault_switch("standby-lease-watch-behind");
    if (!behind_while_standing_by) {
        m_slots.apply(event, std::chrono::steady_clock::now());
    }
    if (event.kind == kubeapi::WatchEvent::Kind::synced && !m_slots_listed_this_term) {
        m_slots_listed_this_term = true;
        if (m_leading) {
            on_change(); // the views may all be synced now
        }
    }
    const auto is_ours = [this](const json& lease) {
        return kubeapi::name_of(lease) == m_settings.lease_name;
    };
    std::optional<json> lease;
    if (event.kind == kubeapi::WatchEvent::Kind::synced) {
        auto found = std::ranges::find_if(event.items, is_ours);
        if (found != event.items.end()) {
            lease = *found;
        }
    } else if (!is_ours(event.object)) {
        return; // a slot Lease: the board's listener has it
    } else if (event.kind != kubeapi::WatchEvent::Kind::deleted) {
        lease = event.object;
    }
    m_elector.observe(lease);
    // The leader keeps its renewal rhythm; a candidate's next round moves with what it saw.
    if (!m_leading && !m_released) {
        schedule_round(candidate_delay());
    }
}

std::chrono::milliseconds Coordinator::candidate_delay() {
    std::uniform_int_distribution<long> jitter(
        0,
        std::chrono::duration_cast<std::chrono::milliseconds>(m_settings.retry_period).count() / 2);
    return m_elector.next_round_in() + std::chrono::milliseconds(jitter(m_rng));
}

void Coordinator::schedule_round(std::chrono::milliseconds delay) {
    auto timer = m_loop.after(delay, [this] { round(); });
    if (!timer) {
        // Without a timer there are no more rounds: stop acting rather than lead unrenewed.
        m_log.error("coordinator: " + timer.error().message() + "; no longer a candidate");
        end_term("the event loop refused a timer");
        return;
    }
    m_round_timer = std::move(*timer);
}

void Coordinator::begin_requests() {
    m_client.join_pass(std::make_shared<kubeapi::ApiPass>(m_settings.heartbeat));
}

void Coordinator::round() {
    if (m_released) {
        return;
    }
    if (m_leading) {
        check_term();
        report_watch_problems();
        schedule_round(m_leading ? m_settings.retry_period : candidate_delay());
        return;
    }
    begin_requests();
    ++m_stats.rounds;
    const auto now = Clock::now();
    auto held = m_elector.try_acquire_or_renew(m_client, now);
    if (!held) {
        if (!m_round_failing) {
            m_log.warning("coordinator: election round on Lease " + m_settings.ns + "/" +
                          m_settings.lease_name + ": " + held.error().message());
        }
        m_round_failing = true;
    } else {
        m_round_failing = false;
    }
    // An unanswered round keeps us leading until the renew deadline; a lost one ends it now.
    const bool lead = (held ? *held : true) && m_elector.is_leader(now);
    if (lead && !m_leading) {
        if (auto begun = begin_term(); !begun) {
            m_log.error("coordinator: " + begun.error().message());
            end_term("the watches could not start");
        }
    }
    report_watch_problems();
    // A failed round waits a whole period, so an unreachable API server is not hammered.
    schedule_round(m_leading || !held ? m_settings.retry_period : candidate_delay());
}

void Coordinator::check_term() {
    m_stats.rounds += m_renewal->take_rounds();
    const std::string problem = m_renewal->problem();
    if (!problem.empty() && !m_round_failing) {
        m_log.warning("coordinator: renewing Lease " + m_settings.ns + "/" + m_settings.lease_name +
                      ": " + problem);
    }
    m_round_failing = !problem.empty();
    if (auto lost = m_renewal->lost()) {
        end_term(*lost);
    } else if (!m_renewal->leading()) {
        end_term("no renewal within the renew deadline");
    } else if (m_pass_owed) {
        m_pass_owed = false;
        on_change();
    }
}

// A watch retries on its own; without this a leader whose watch keeps failing (RBAC, a missing
// CRD) would do nothing and say nothing.
void Coordinator::report_watch_problems() {
    const std::pair<const char*, const kubeapi::Watch*> watches[] = {
        {"the coordinator Lease", m_lease_watch.get()},
        {"Shims", m_shim_watch.get()},
        {"Nodes", m_node_watch.get()},
        {"RuntimeClasses", m_class_watch.get()},
        {"node Events about Shims", m_write_event_watch.get()}};
    for (const auto& [what, watch] : watches) {
        if (watch == nullptr) {
            continue;
        }
        std::string problem = watch->stopped()                ? watch->stopped()->message()
                              : watch->state().failures() > 0 ? watch->state().last_problem()
                                                              : "";
        if (!problem.empty() && problem != m_reported_problem) {
            m_log.warning(std::string("coordinator: the watch on ") + what +
                          " fails, retrying: " + problem);
            m_reported_problem = problem;
        }
    }
}

util::Expected<void> Coordinator::begin_term() {
    m_leading = true;
    m_renewal = std::make_unique<kubeapi::LeaderRenewal>(
        m_client.connection().config(), m_elector,
        kubeapi::LeaseSettings{m_settings.ns, m_settings.lease_name, m_settings.identity,
                               m_settings.lease_duration, m_settings.renew_deadline,
                               m_settings.retry_period},
        m_client.connection().stats());
    ++m_stats.terms;
    m_log.info("coordinator: " + m_settings.identity + " leads (Lease " + m_settings.ns + "/" +
               m_settings.lease_name + ")");
    m_view = {};
    m_term = {};
    m_shims_synced = m_nodes_synced = m_classes_synced = false;
    m_views_in_this_term = false;
    // The slots listed anew, as the Shims and Nodes are: a candidate's Lease watch may run seconds
    // behind a loaded API server, and a new leader granting from it could grant slots of a
    // generation whose failed slot it has not seen yet (fresh Node requests beside stale slots).
    // A list without a resourceVersion is a consistent read: every failure marked before it.
    if (!reconcile::fault_switch("term-keeps-slots")) { // tests only (fault.hpp)
        TRY(watch_leases());
    }
    kubeapi::Connection& connection = m_client.connection();
    m_shim_watch = std::make_unique<kubeapi::Watch>(
        connection, m_loop, model::shims_resource(), "", kubeapi::WatchSettings{},
        [this](const kubeapi::WatchEvent& event) {
            if (status_change_missed(m_view.shims, event)) {
                return; // tests only (fault.hpp)
            }
            apply_event(m_view.shims, event);
            m_shims_synced = true;
            on_change();
        });
    m_node_watch = std::make_unique<kubeapi::Watch>(
        connection, m_loop, kubeapi::nodes_resource(), "", kubeapi::WatchSettings{},
        [this](const kubeapi::WatchEvent& event) {
            const NodeChange change = apply_event(m_view.nodes, event);
            const bool settled = stamp_holds_of(m_view, event);
            if (change.seen || !m_nodes_synced) {
                m_nodes_synced = true;
                on_change();
            }
            if (change.asked) {
                arm_grant_pass(GrantCause::node_asked);
            }
            if (settled) { // a node released its slot or failed: free it or halt at once
                arm_grant_pass(GrantCause::slot_went);
            }
        });
    m_class_watch = std::make_unique<kubeapi::Watch>(
        connection, m_loop, kubeapi::runtime_classes_resource(), "", kubeapi::WatchSettings{},
        [this](const kubeapi::WatchEvent& event) {
            apply_event(m_view.runtime_classes, event);
            m_classes_synced = true;
            on_change();
        });
    kubeapi::WatchSettings shim_events;
    shim_events.field_selector = "involvedObject.kind=Shim";
    m_write_event_watch = std::make_unique<kubeapi::Watch>(
        connection, m_loop, kubeapi::core_events_resource(), "default", shim_events,
        [this](const kubeapi::WatchEvent& event) {
            if (apply_write_events(m_view.write_refusals, event)) {
                on_change();
            }
        });
    TRY(m_shim_watch->start());
    TRY(m_node_watch->start());
    TRY(m_class_watch->start());
    TRY(m_write_event_watch->start());
    return {};
}

void Coordinator::end_term(const std::string& why) {
    if (m_leading) {
        m_log.info("coordinator: " + m_settings.identity + " no longer leads: " + why);
    }
    m_leading = false;
    if (m_renewal) { // waits for at most the renewal in flight
        m_elector = m_renewal->stop();
        m_stats.rounds += m_renewal->take_rounds();
        m_renewal.reset();
    }
    m_shim_watch.reset();
    m_node_watch.reset();
    m_class_watch.reset();
    m_write_event_watch.reset();
    m_view = {};
    m_term = {};
    m_stats.shim_nodes.clear(); // only a leader's view counts nodes
    m_shims_synced = m_nodes_synced = m_classes_synced = false;
    m_views_in_this_term = false;
    m_pass_armed = false;
    m_pass_owed = false;
    m_pass_timer.reset();
    m_grant_armed = false;
    m_grant_causes.clear();
    m_grant_timer.reset();
    m_failures_in_row = 0;
}

void Coordinator::on_change() {
    if (!views_synced()) {
        return;
    }
    if (!m_views_in_this_term) {
        // This term's views are all in for the first time, and nodes may be waiting already (a
        // leader taking over mid-rollout, or one started after they staged): their grants go now,
        // not after the settle time and the first pass's writes of every Shim.
        m_views_in_this_term = true;
        arm_grant_pass(GrantCause::views_in);
    }
    arm_pass(m_settings.settle);
}

void Coordinator::arm_pass(std::chrono::milliseconds delay) {
    const auto due = Clock::now() + delay;
    if (m_pass_armed && m_pass_due <= due) {
        return; // the pass already planned will see this change too
    }
    // After the watch events that came while the last pass's writes held the loop.
    auto timer = m_loop.after_reading_ready_data(delay, [this] { pass(); });
    if (!timer) {
        m_log.error("coordinator: " + timer.error().message());
        return;
    }
    m_pass_timer = std::move(*timer);
    m_pass_armed = true;
    m_pass_due = due;
}

bool Coordinator::still_leading() const {
    return m_leading && m_renewal && m_renewal->leading(Clock::now());
}

void Coordinator::pass() {
    m_pass_armed = false; // m_pass_timer is this callback's source: replaced later, not here
    if (!still_leading()) {
        m_pass_owed = true; // the next round ends the term, or renews it and runs the pass
        return;
    }
    if (reconcile::fault_switch("pass-stalls")) {
        stall_the_first_pass(m_log);
    }
    begin_requests();
    CoordinatorPass runner(m_client, m_events, m_log, [this] { return still_leading(); });
    load_slots_into_view();
    PassOutcome outcome = runner.run(m_view, m_term);
    count_outcome(outcome);
    if (outcome.grants_left) {
        arm_grant_pass(GrantCause::batch_cut);
    }
    if (outcome.interrupted) {
        m_pass_owed = true;
        return;
    }
    ++m_stats.passes;
    if (outcome.errors.empty()) {
        m_failures_in_row = 0;
        // A holder that dies sends no event: look again when its slot runs out unrenewed.
        auto expiry = model::next_slot_expiry(model::judged_slots(m_slots.slots(), m_view.holds),
                                              slot_reclaim_wait());
        // Nor does a node's failed slot of a Shim that does not select it, freed after a lease.
        if (auto foreign =
                model::next_foreign_failure(m_slots.slots(), m_view.shims, m_view.nodes)) {
            expiry = expiry ? std::min(*expiry, *foreign) : *foreign;
        }
        if (outcome.progress_due) { // a status held back: write it then, changes or not
            expiry = expiry ? std::min(*expiry, *outcome.progress_due) : *outcome.progress_due;
        }
        // A node's refusal no Event repeated: its status no longer names it.
        if (auto forgotten = m_view.write_refusals.next_expiry(Clock::now())) {
            expiry = expiry ? std::min(*expiry, *forgotten) : *forgotten;
        }
        if (auto unseen = m_term.grants.next_pending_expiry()) { // a grant the watch never showed
            expiry = expiry ? std::min(*expiry, *unseen) : *unseen;
        }
        if (expiry) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(*expiry - Clock::now());
            // Just past the due time: the rules judge "older than", strictly.
            constexpr std::chrono::milliseconds k_past_due{100};
            arm_pass(std::max(left, std::chrono::milliseconds(0)) + k_past_due);
        }
        return;
    }
    ++m_stats.failed_passes;
    ++m_failures_in_row;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    arm_pass(kubeapi::retry_backoff(m_failures_in_row, m_settings.backoff_initial,
                                    m_settings.backoff_max, unit(m_rng)));
}

void Coordinator::count_outcome(const PassOutcome& outcome) {
    m_stats.writes += outcome.writes;
    m_stats.grants += outcome.grants;
    m_stats.halts += outcome.halts;
    for (const auto& [shim, counts] : outcome.nodes) {
        m_stats.shim_nodes[shim] = counts;
    }
    std::erase_if(m_stats.shim_nodes,
                  [this](const auto& entry) { return !m_view.shims.contains(entry.first); });
}

std::string Coordinator::unready_reason() const {
    if (m_released) {
        return "the coordinator is stopping";
    }
    if (!m_slots.synced()) {
        return "no list of the Leases in " + m_settings.ns + " yet (no answer from the API server)";
    }
    if (m_lease_watch && m_lease_watch->state().failures() > 0) {
        return "the watch on the Leases in " + m_settings.ns +
               " fails: " + m_lease_watch->state().last_problem();
    }
    if (m_leading && !views_synced()) {
        return "leading, but the views of Shims, Nodes, RuntimeClasses and slots are not all "
               "synced yet";
    }
    return "";
}

void Coordinator::load_slots_into_view() {
    m_view.slots = model::judged_slots(m_slots.slots(), m_view.holds);
    m_term.grants.note_slots_seen(m_view.slots);
    m_view.slot_events = m_slots.events();
    m_view.slots_synced = m_slots.synced();
    m_view.ns = m_settings.ns;
}

// Zero delay, after the data ready to read: the slots freed (and the requests made) in what
// arrived together are granted in one go, and a failure that arrived with them halts them. Only
// grants: the full pass the same events armed (on_change) still comes after its settle time.
void Coordinator::arm_grant_pass(GrantCause cause) {
    if (!views_synced()) {
        return;
    }
    m_grant_causes.insert(cause);
    if (m_grant_armed) {
        return;
    }
    // After the watch events that came while a pass's writes held the loop: a failure the watch
    // has already brought must halt the grants, not wait unread behind them.
    if (auto timer = m_loop.after_reading_ready_data(std::chrono::milliseconds(0),
                                                     [this] { grant_pass(); })) {
        m_grant_timer = std::move(*timer);
        m_grant_armed = true;
    } else {
        m_log.error("coordinator: " + timer.error().message());
    }
}

void Coordinator::grant_pass() {
    m_grant_armed = false; // m_grant_timer is this callback's source: replaced later, not here
    const std::set<GrantCause> causes = std::exchange(m_grant_causes, {});
    if (!still_leading() || !views_synced()) {
        return; // the next full pass grants
    }
    begin_requests();
    CoordinatorPass runner(m_client, m_events, m_log, [this] { return still_leading(); });
    load_slots_into_view();
    // The log says why (tests/cluster/rollout_bound.sh counts both kinds).
    std::string when = " (at once:";
    const char* separator = " ";
    for (const auto& [cause, why] : {std::pair{GrantCause::slot_went, "a slot went"},
                                     std::pair{GrantCause::node_asked, "a node asked"},
                                     std::pair{GrantCause::batch_cut, "the rest of a batch"},
                                     std::pair{GrantCause::views_in, "the term's views came in"}}) {
        if (causes.contains(cause)) {
            when += separator;
            when += why;
            separator = ", ";
        }
    }
    // A failed grant needs no retry of its own: the event also armed a full pass (on_change),
    // which grants too and owns the backoff.
    const PassOutcome outcome = runner.run_grants(m_view, m_term, when + ")");
    count_outcome(outcome);
    if (outcome.grants_left) {
        arm_grant_pass(GrantCause::batch_cut);
    }
}

util::Expected<void> Coordinator::release() {
    m_released = true;
    begin_requests();
    m_round_timer.reset();
    m_lease_watch.reset();
    end_term("released");
    return m_elector.release(m_client);
}

} // namespace shimkeeper::cluster::coordinator
