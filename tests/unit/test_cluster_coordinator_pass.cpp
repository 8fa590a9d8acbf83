// The coordinator's pass (coordinator_pass.hpp) against the in-memory API server: from a view of
// Shims, Nodes and slot Leases, what exists afterwards, what the pass reports, and where it stops.
#include "cluster_fixtures.hpp"
#include "fake_api_client.hpp"
#include "shimkeeper/cluster/coordinator/coordinator_pass.hpp"
#include "shimkeeper/cluster/model/node_shim_state.hpp"
#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/object_meta.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace shimkeeper::cluster::coordinator {
namespace {
namespace cluster_coordinator_pass {

using kubeapi::FakeApiClient;
using nlohmann::json;

const std::string k_ns = "shimkeeper";
const std::string k_since = "2026-11-30T01:00:00.000000Z";

json rolling_shim(const std::string& name, int max_update) {
    json shim = agent::fixtures::shim_object(name, 1, agent::fixtures::k_sha_a);
    shim["spec"]["nodeSelector"] = {{"wasm", "true"}};
    shim["spec"]["rolloutStrategy"] = {{"type", "rolling"},
                                       {"rolling", {{"maxUpdate", max_update}}}};
    return shim;
}

bool has_finalizer(const json& shim) {
    const json finalizers = shim["metadata"].value("finalizers", json::array());
    return std::ranges::find(finalizers, json(k_uninstall_finalizer)) != finalizers.end();
}

class CoordinatorPassTest : public ::testing::Test {
protected:
    CoordinatorPassTest() {
        view.ns = k_ns;
        view.slots_synced = true;
    }

    // The Shim as the API server stores it (uid, resourceVersion), and in the watched view.
    json add_shim(const json& shim) {
        json stored = api.put(model::shims_resource(), "", shim);
        view.shims[kubeapi::name_of(stored)] = stored;
        return stored;
    }

    // A Node the Shim selects that asks for a slot of the Shim's generation.
    void add_node_asking(const std::string& name, const json& shim) {
        json node;
        node["metadata"]["name"] = name;
        node["metadata"]["labels"] = {{"wasm", "true"}};
        const model::SlotRequest request{shim["metadata"]["uid"],
                                         shim["metadata"]["generation"].get<long>(), k_since};
        node["metadata"]["annotations"][model::k_slot_requests_key] =
            model::format_slot_requests(model::SlotRequests{{kubeapi::name_of(shim), request}});
        view.nodes.emplace(name, model::NodeView::of(node));
    }

    // Every slot Lease's holder, by Lease name.
    std::map<std::string, std::string> slot_holders() const {
        std::map<std::string, std::string> holders;
        for (const json& lease : api.objects(kubeapi::leases_resource(), k_ns)) {
            holders[kubeapi::name_of(lease)] = model::slot_lease_of(lease).holder;
        }
        return holders;
    }

    static kubeapi::Resource leases() { return kubeapi::leases_resource(); }

    // Shim spin with one slot, granted by a pass to n1 while n2 asks too: the slot's Lease name.
    std::string slot_granted_to_n1_while_n2_waits() {
        const json shim = add_shim(rolling_shim("spin", 1));
        add_node_asking("n1", shim);
        add_node_asking("n2", shim);
        pass.run(view, term);
        return model::slot_lease_name("spin", 0);
    }

    // The slot watch shows Lease `name` as stored now, its holder done with it (the judged
    // view: slot_view.hpp), one event more of that name than before.
    void see_released(const std::string& name) {
        model::SlotSeen seen{model::slot_lease_of(*api.find(leases(), k_ns, name)),
                             std::chrono::steady_clock::now()};
        seen.lease.holder.clear();
        view.slots = {seen};
        ++view.slot_events[name];
    }

    std::vector<FakeApiClient::Call> writes() const {
        std::vector<FakeApiClient::Call> out;
        for (const auto& call : api.calls()) {
            if (call.verb != "get" && call.verb != "list") {
                out.push_back(call);
            }
        }
        return out;
    }

    FakeApiClient api;
    kubeapi::EventRecorder events{api, {"shimkeeper.containerd.x-k8s.io/coordinator", "test"}};
    util::Log log{util::LogLevel::error};
    bool leading = true;
    ClusterView view;
    TermMemory term; // what the term remembers between passes
    // How long each leadership check takes: a machine that stands still between the steps.
    std::chrono::milliseconds stall_in_leading_check{0};
    CoordinatorPass pass{api, events, log, [this] {
                             std::this_thread::sleep_for(stall_in_leading_check);
                             return leading;
                         }};
};

TEST_F(CoordinatorPassTest, ANewShimGetsTheFinalizerItsRuntimeClassAndAStatus) {
    add_shim(agent::fixtures::shim_object("spin", 1, agent::fixtures::k_sha_a));
    const PassOutcome outcome = pass.run(view, term);
    EXPECT_TRUE(outcome.errors.empty());
    const json shim = *api.find(model::shims_resource(), "", "spin");
    EXPECT_TRUE(has_finalizer(shim));
    EXPECT_TRUE(shim.contains("status")) << "the status is written in the same pass";
    const auto runtime_class = api.find(kubeapi::runtime_classes_resource(), "", "spin");
    ASSERT_TRUE(runtime_class) << "the RuntimeClass is created";
    EXPECT_EQ(runtime_class->value("handler", ""), "spin");
    EXPECT_TRUE(view.runtime_classes.contains("spin")) << "the view has it before the watch";
    EXPECT_EQ(api.calls_of("create", "events").size(), 1u) << "RuntimeClassCreated";

    api.clear_calls();
    pass.run(view, term);
    EXPECT_TRUE(writes().empty()) << "a second pass over the same view writes nothing";
}

TEST_F(CoordinatorPassTest, ANodeAskingForASlotOfARollingShimGetsALeaseNamingIt) {
    const json shim = add_shim(rolling_shim("spin", 1));
    add_node_asking("n2", shim);
    add_node_asking("n1", shim);
    const PassOutcome outcome = pass.run(view, term);
    EXPECT_TRUE(outcome.errors.empty());
    EXPECT_EQ(slot_holders(),
              (std::map<std::string, std::string>{{model::slot_lease_name("spin", 0), "n1"}}))
        << "one slot (maxUpdate 1), to the first node by name";

    pass.run(view, term); // before the watch shows the grant
    pass.run_grants(view, term, " (at once)");
    EXPECT_EQ(slot_holders().size(), 1u) << "a grant the watch has not shown is not made again";
}

TEST_F(CoordinatorPassTest, NoMoreSlotsAreGrantedThanMaxUpdate) {
    const json shim = add_shim(rolling_shim("spin", 2));
    for (const std::string node : {"n1", "n2", "n3"}) {
        add_node_asking(node, shim);
    }
    pass.run(view, term);
    EXPECT_EQ(slot_holders(),
              (std::map<std::string, std::string>{{model::slot_lease_name("spin", 0), "n1"},
                                                  {model::slot_lease_name("spin", 1), "n2"}}));
}

TEST_F(CoordinatorPassTest, ANodeTheShimDoesNotSelectGetsNoSlot) {
    const json shim = add_shim(rolling_shim("spin", 1));
    add_node_asking("n1", shim);
    model::NodeView& node = view.nodes.at("n1");
    node.labels.erase("wasm");
    pass.run(view, term);
    EXPECT_TRUE(slot_holders().empty());
}

TEST_F(CoordinatorPassTest, APassThatIsNotLeadingWritesNothing) {
    const json shim = add_shim(rolling_shim("spin", 1));
    add_node_asking("n1", shim);
    leading = false;
    const PassOutcome outcome = pass.run(view, term);
    EXPECT_TRUE(outcome.interrupted);
    EXPECT_TRUE(writes().empty());
    EXPECT_FALSE(has_finalizer(*api.find(model::shims_resource(), "", "spin")));

    const PassOutcome grants = pass.run_grants(view, term, " (at once)");
    EXPECT_TRUE(grants.interrupted);
    EXPECT_TRUE(api.calls().empty());
    EXPECT_TRUE(slot_holders().empty());
}

TEST_F(CoordinatorPassTest, ARefusedCreateIsReportedAndThePassGoesOn) {
    add_shim(agent::fixtures::shim_object("spin", 1, agent::fixtures::k_sha_a));
    add_shim(agent::fixtures::shim_object("wasm", 1, agent::fixtures::k_sha_b));
    api.fail_next("create", "runtimeclasses",
                  util::Error(util::ErrorCode::refused,
                              "runtimeclasses.node.k8s.io is forbidden (HTTP 403 Forbidden)"));
    const PassOutcome outcome = pass.run(view, term);
    ASSERT_EQ(outcome.errors.size(), 1u);
    EXPECT_EQ(outcome.errors.front().code(), util::ErrorCode::refused);
    EXPECT_NE(outcome.errors.front().message().find("RuntimeClass spin"), std::string::npos)
        << outcome.errors.front().message();
    EXPECT_FALSE(api.find(kubeapi::runtime_classes_resource(), "", "spin"));
    EXPECT_TRUE(api.find(model::shims_resource(), "", "spin")->contains("status"))
        << "the refused Shim's status is still written";
    EXPECT_TRUE(api.find(kubeapi::runtime_classes_resource(), "", "wasm"))
        << "the next Shim is still served";
    EXPECT_TRUE(has_finalizer(*api.find(model::shims_resource(), "", "wasm")));
}

TEST_F(CoordinatorPassTest, ARequestWithNoAnswerStopsThePass) {
    api.join_pass(std::make_shared<kubeapi::ApiPass>());
    add_shim(agent::fixtures::shim_object("spin", 1, agent::fixtures::k_sha_a));
    add_shim(agent::fixtures::shim_object("wasm", 1, agent::fixtures::k_sha_b));
    api.fail_next("update", "shims",
                  util::Error(util::ErrorCode::network, "PUT /apis/...: timed out"));
    const PassOutcome outcome = pass.run(view, term);
    ASSERT_FALSE(outcome.errors.empty());
    EXPECT_EQ(outcome.errors.front().code(), util::ErrorCode::network);
    EXPECT_EQ(api.calls(), (std::vector<FakeApiClient::Call>{{"get", "shims", "spin"},
                                                             {"update", "shims", "spin"}}))
        << "nothing is asked after the request that got no answer";
    EXPECT_FALSE(has_finalizer(*api.find(model::shims_resource(), "", "wasm")));
    EXPECT_TRUE(api.objects(kubeapi::runtime_classes_resource(), "").empty());
    // The API server refuses nothing more once silent (the ApiPass fails each request before it
    // is sent); the pass itself must stop too, or it reports a failure for every Shim left.
    for (const util::Error& error : outcome.errors) {
        EXPECT_EQ(error.message().find("wasm"), std::string::npos) << error.message();
    }
}

TEST_F(CoordinatorPassTest, AReleasedSlotOfAShimThatIsGoneIsDeleted) {
    const model::RolloutTarget target{"gone", "u-9", 1, 1};
    const json lease =
        api.put(kubeapi::leases_resource(), k_ns, model::slot_lease_for(target, 0, "", k_since));
    view.slots.push_back({model::slot_lease_of(lease), std::chrono::steady_clock::now()});
    const PassOutcome outcome = pass.run(view, term);
    EXPECT_TRUE(outcome.errors.empty());
    EXPECT_TRUE(slot_holders().empty());
}

TEST_F(CoordinatorPassTest, ASlotThatChangedSinceTheViewIsNotDeleted) {
    const model::RolloutTarget target{"gone", "u-9", 1, 1};
    const json lease =
        api.put(kubeapi::leases_resource(), k_ns, model::slot_lease_for(target, 0, "", k_since));
    view.slots.push_back({model::slot_lease_of(lease), std::chrono::steady_clock::now()});
    api.put(kubeapi::leases_resource(), k_ns, lease); // a newer version the watch has not shown
    const PassOutcome outcome = pass.run(view, term);
    EXPECT_TRUE(outcome.errors.empty()) << "a conflict waits for the watch, it is no failure";
    EXPECT_EQ(api.calls_of("remove", "leases").size(), 1u);
    EXPECT_EQ(slot_holders().size(), 1u) << "deleted only at the version judged";
}

TEST_F(CoordinatorPassTest, ASlotReleasedWhileANodeWaitsIsHandedOverInOneWrite) {
    const std::string name = slot_granted_to_n1_while_n2_waits();
    const model::SlotLease first = model::slot_lease_of(*api.find(leases(), k_ns, name));
    ASSERT_EQ(first.holder, "n1");

    see_released(name); // n1 said done
    api.clear_calls();
    PassOutcome outcome = pass.run_grants(view, term, " (at once)");
    EXPECT_TRUE(outcome.errors.empty());
    EXPECT_EQ(writes(), (std::vector<FakeApiClient::Call>{{"update", "leases", name}}))
        << "freed and granted again by one update, not a delete and a create";
    const model::SlotLease second = model::slot_lease_of(*api.find(leases(), k_ns, name));
    EXPECT_EQ(second.holder, "n2");
    EXPECT_NE(second.grant, first.grant);
    EXPECT_EQ(outcome.grants, 1u);
    ASSERT_EQ(view.slots.size(), 1u);
    EXPECT_EQ(view.slots[0].lease.holder, "n2") << "the view has the new grant before the watch";

    see_released(name); // n2 said done, and nobody waits any more
    api.clear_calls();
    outcome = pass.run_grants(view, term, " (at once)");
    EXPECT_TRUE(outcome.errors.empty());
    EXPECT_EQ(writes(), (std::vector<FakeApiClient::Call>{{"remove", "leases", name}}));
    EXPECT_TRUE(slot_holders().empty()) << "a slot no node waits for is deleted";
}

TEST_F(CoordinatorPassTest, AHandOverOfASlotThatChangedSinceItWasJudgedFreeIsNoGrant) {
    const std::string name = slot_granted_to_n1_while_n2_waits();
    see_released(name);
    const json newer = api.put(leases(), k_ns, *api.find(leases(), k_ns, name)); // unseen
    api.clear_calls();
    const PassOutcome outcome = pass.run_grants(view, term, " (at once)");
    EXPECT_TRUE(outcome.errors.empty()) << "a conflict waits for the watch, it is no failure";
    EXPECT_EQ(outcome.grants, 0u);
    EXPECT_EQ(writes(), (std::vector<FakeApiClient::Call>{{"update", "leases", name}}))
        << "neither granted again nor deleted at the stale version";
    EXPECT_EQ(*api.find(leases(), k_ns, name), newer);
}

// A grant step stops after k_grant_batch_time to read the watches, but not before its first
// group: one kept past the bound before its first write (a starved machine, a long plan) would
// otherwise grant nothing, pass after pass.
TEST_F(CoordinatorPassTest, AGrantStepPastItsTimeBeforeItsFirstGroupStillSendsThatGroup) {
    const json shim = add_shim(rolling_shim("spin", 9));
    for (int i = 1; i <= 9; ++i) {
        add_node_asking("n" + std::to_string(i), shim);
    }
    stall_in_leading_check = k_grant_batch_time + std::chrono::milliseconds(50);
    const PassOutcome outcome = pass.run_grants(view, term, " (at once)");
    EXPECT_TRUE(outcome.errors.empty());
    EXPECT_EQ(outcome.grants, k_grants_together) << "the first group, and only it";
    EXPECT_TRUE(outcome.grants_left) << "the rest after the watches were read";
    EXPECT_EQ(slot_holders().size(), k_grants_together);
}

TEST_F(CoordinatorPassTest, AGrantsCreateAnsweredNotFoundIsAFailureOnlyAHandOverMayMeetIt) {
    const json shim = add_shim(rolling_shim("spin", 1));
    add_node_asking("n1", shim);
    api.fail_next("create", "leases",
                  util::Error(util::ErrorCode::not_found,
                              "namespaces \"shimkeeper\" not found (HTTP 404 Not Found)"));
    const PassOutcome outcome = pass.run_grants(view, term, " (at once)");
    ASSERT_EQ(outcome.errors.size(), 1u) << "the grant was not made, and the pass says why";
    EXPECT_NE(outcome.errors[0].message().find("granting rollout slot Lease spin-slot-0"),
              std::string::npos)
        << outcome.errors[0].message();
    EXPECT_EQ(outcome.grants, 0u);
}

TEST_F(CoordinatorPassTest, AHeldSlotNotRenewedForLongIsRevokedNotDeleted) {
    const json shim = add_shim(rolling_shim("spin", 1));
    const model::RolloutTarget target{"spin", shim["metadata"]["uid"], 1, 1};
    const json lease =
        api.put(kubeapi::leases_resource(), k_ns, model::slot_lease_for(target, 0, "n1", k_since));
    const auto long_ago = std::chrono::steady_clock::now() - std::chrono::hours(1);
    view.slots.push_back({model::slot_lease_of(lease), long_ago});
    const PassOutcome outcome = pass.run(view, term);
    EXPECT_TRUE(outcome.errors.empty());
    const auto revoked = api.find(kubeapi::leases_resource(), k_ns, kubeapi::name_of(lease));
    ASSERT_TRUE(revoked) << "its holder may still be working: revoked first";
    EXPECT_FALSE(model::slot_lease_of(*revoked).revoked.empty());
    EXPECT_EQ(model::slot_lease_of(*revoked).holder, "n1");
}

} // namespace cluster_coordinator_pass
} // namespace
} // namespace shimkeeper::cluster::coordinator
