// The in-memory API server the decision tests stand on (fake_api_client.hpp): it must answer the
// preconditions as the real one does, or those tests would pass on behaviour no cluster has.
#include "fake_api_client.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::kubeapi {
namespace {
namespace kubeapi_fake_api_client {

using nlohmann::json;

const std::string k_ns = "shimkeeper";

json lease(const std::string& name, json labels = json::object()) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", name}, {"labels", std::move(labels)}}},
            {"spec", {{"holderIdentity", "n1"}}}};
}

std::string version_of(const json& object) {
    return object["metadata"].value("resourceVersion", "");
}

TEST(KubeapiFakeApiClient, ACreateStampsTheObjectAndASecondOneOfTheNameConflicts) {
    FakeApiClient api;
    const auto created = api.create(leases_resource(), k_ns, lease("a"));
    ASSERT_TRUE(created);
    EXPECT_FALSE(version_of(*created).empty());
    EXPECT_FALSE((*created)["metadata"].value("uid", "").empty());
    EXPECT_EQ((*created)["metadata"].value("namespace", ""), k_ns);
    const auto again = api.create(leases_resource(), k_ns, lease("a"));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), util::ErrorCode::conflict);
    const auto missing = api.get(leases_resource(), k_ns, "b");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), util::ErrorCode::not_found);
}

TEST(KubeapiFakeApiClient, WritesAtAStaleVersionConflictAndEveryWriteMovesTheVersion) {
    FakeApiClient api;
    const json first = api.create(leases_resource(), k_ns, lease("a")).value();
    json changed = first;
    changed["spec"]["holderIdentity"] = "n2";
    const json second = api.update(leases_resource(), k_ns, changed).value();
    EXPECT_NE(version_of(second), version_of(first));
    EXPECT_EQ(api.update(leases_resource(), k_ns, changed).error().code(),
              util::ErrorCode::conflict)
        << "the first version again";
    EXPECT_EQ(api.json_patch(
                     leases_resource(), k_ns, "a",
                     json::array(
                         {{{"op", "replace"}, {"path", "/spec/holderIdentity"}, {"value", "n3"}}}),
                     version_of(first))
                  .error()
                  .code(),
              util::ErrorCode::conflict);
    EXPECT_EQ(api.remove(leases_resource(), k_ns, "a", version_of(first)).error().code(),
              util::ErrorCode::conflict);
    EXPECT_EQ(api.find(leases_resource(), k_ns, "a")->at("spec").value("holderIdentity", ""), "n2");
    ASSERT_TRUE(api.remove(leases_resource(), k_ns, "a", version_of(second)));
    EXPECT_EQ(api.remove(leases_resource(), k_ns, "a").error().code(), util::ErrorCode::not_found);
}

TEST(KubeapiFakeApiClient, AStatusPatchChangesTheStatusAlone) {
    FakeApiClient api;
    api.create(leases_resource(), k_ns, lease("a")).value();
    const json patched =
        api.merge_patch(leases_resource(), k_ns, "a",
                        {{"spec", {{"holderIdentity", "n9"}}}, {"status", {{"ok", true}}}},
                        "status")
            .value();
    EXPECT_EQ(patched["status"], (json{{"ok", true}}));
    EXPECT_EQ(patched["spec"].value("holderIdentity", ""), "n1");
}

TEST(KubeapiFakeApiClient, ADeleteOfAnObjectWithFinalizersMarksItUntilTheLastOneGoes) {
    FakeApiClient api;
    json held = lease("a");
    held["metadata"]["finalizers"] = {"example.com/keep"};
    api.create(leases_resource(), k_ns, held).value();
    ASSERT_TRUE(api.remove(leases_resource(), k_ns, "a"));
    json marked = *api.find(leases_resource(), k_ns, "a");
    EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp"));
    marked["metadata"]["finalizers"] = json::array();
    ASSERT_TRUE(api.update(leases_resource(), k_ns, marked));
    EXPECT_FALSE(api.find(leases_resource(), k_ns, "a"));
}

TEST(KubeapiFakeApiClient, AListKeepsTheObjectsItsLabelSelectorMatches) {
    FakeApiClient api;
    api.put(leases_resource(), k_ns, lease("a", {{"holder", "n1"}, {"kind", "slot"}}));
    api.put(leases_resource(), k_ns, lease("b", {{"holder", "n2"}, {"kind", "slot"}}));
    api.put(leases_resource(), k_ns, lease("c"));
    api.put(leases_resource(), "other", lease("d", {{"holder", "n1"}}));
    const auto names = [&](const std::string& ns, const std::string& selector) {
        std::vector<std::string> out;
        const ObjectList listed = api.list(leases_resource(), ns, {selector, "", 0}).value();
        for (const json& item : listed.items) {
            out.push_back(item["metadata"]["name"]);
        }
        return out;
    };
    using Names = std::vector<std::string>;
    EXPECT_EQ(names(k_ns, ""), (Names{"a", "b", "c"}));
    EXPECT_EQ(names(k_ns, "holder=n1"), (Names{"a"}));
    EXPECT_EQ(names(k_ns, "kind==slot,holder!=n1"), (Names{"b"}));
    EXPECT_EQ(names(k_ns, "holder"), (Names{"a", "b"}));
    EXPECT_EQ(names(k_ns, "!holder"), (Names{"c"}));
    EXPECT_EQ(names("", "holder=n1"), (Names{"d", "a"})) << "across all, by namespace and name";
    EXPECT_FALSE(api.list(leases_resource(), k_ns, {"holder in (n1)", "", 0}));
    EXPECT_FALSE(api.list(leases_resource(), k_ns, {"", "metadata.name=a", 0}))
        << "field selectors are refused, not ignored";
}

TEST(KubeapiFakeApiClient,
     AnInjectedFailureAnswersTheNextCallsOfItsVerbAndNoAnswerSilencesThePass) {
    FakeApiClient api;
    auto pass = std::make_shared<ApiPass>();
    api.join_pass(pass);
    api.fail_next("create", "leases", util::Error(util::ErrorCode::refused, "HTTP 403"));
    EXPECT_EQ(api.create(leases_resource(), k_ns, lease("a")).error().code(),
              util::ErrorCode::refused);
    EXPECT_TRUE(pass->answered_so_far()) << "a 403 is an answer";
    ASSERT_TRUE(api.create(leases_resource(), k_ns, lease("a"))) << "only the next call";
    api.fail_next("get", "", util::Error(util::ErrorCode::network, "HTTP 503"));
    EXPECT_FALSE(api.get(leases_resource(), k_ns, "a"));
    EXPECT_FALSE(pass->answered_so_far());
    api.clear_calls();
    EXPECT_FALSE(api.get(leases_resource(), k_ns, "a")) << "the pass asks nothing more";
    EXPECT_TRUE(api.calls().empty());
}

} // namespace kubeapi_fake_api_client
} // namespace
} // namespace shimkeeper::kubeapi
