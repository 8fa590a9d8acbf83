// An API server in memory behind kubeapi::ApiClient, for unit tests of what the coordinator, the
// slot keeper and the election decide: objects kept by (resource, namespace, name), every write
// stamped with the next resourceVersion, the preconditions the real server checks (AlreadyExists,
// a stale resourceVersion, a delete's precondition) answered with the same ErrorCodes, and every
// call recorded. A test seeds objects with put(), may make the next calls of a verb fail, and then
// asserts on what exists afterwards and what was asked.
//
// Deliberately small: no watches, no admission, no field selectors (a list with one is refused,
// so that a test does not pass on a filter it never applied), server-side apply approximated as a
// merge patch. Finalizers behave as the API server's do (a delete only marks an object that has
// some; removing the last one of a marked object deletes it), since the coordinator relies on it.
#pragma once

#include "shimkeeper/kubeapi/api_client.hpp"

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace shimkeeper::kubeapi {

class FakeApiClient final : public ApiClient {
public:
    // One request as the fake received it. verb: get, list, create, update, remove,
    // merge_patch, json_patch, apply; resource: the plural ("leases").
    struct Call {
        std::string verb;
        std::string resource;
        std::string name; // empty for list
        bool operator==(const Call&) const = default;
    };

    // Stores `object` as if created (name, namespace, uid, creationTimestamp and a fresh
    // resourceVersion stamped), replacing any object of that name; returns what is stored.
    // Not recorded as a call.
    nlohmann::json put(const Resource& resource, std::string_view ns, nlohmann::json object);
    // The stored object, nullopt when absent. Not recorded as a call.
    std::optional<nlohmann::json> find(const Resource& resource, std::string_view ns,
                                       std::string_view name) const;
    // Every stored object of the resource in `ns`, in name order.
    std::vector<nlohmann::json> objects(const Resource& resource, std::string_view ns) const;

    const std::vector<Call>& calls() const { return m_calls; }
    // The calls of one verb (any resource when `resource` is empty).
    std::vector<Call> calls_of(std::string_view verb, std::string_view resource = {}) const;
    void clear_calls() { m_calls.clear(); }

    // The next `times` calls of `verb` (on `resource`'s plural, or any when empty) fail with
    // `error`, before touching anything. An error of code network counts as a request that got
    // no answer for the joined pass (as a timeout or a 5xx does for the real client).
    void fail_next(std::string verb, std::string resource, util::Error error, int times = 1);

    // As Client::join_pass: each request asks the pass first, and tells it whether it was
    // answered.
    void join_pass(std::shared_ptr<ApiPass> pass) { m_pass = std::move(pass); }
    const std::shared_ptr<ApiPass>& pass() const override { return m_pass; }

    util::Expected<nlohmann::json> get(const Resource& resource, std::string_view ns,
                                       std::string_view name) override;
    util::Expected<ObjectList> list(const Resource& resource, std::string_view ns,
                                    const ListOptions& options = {}) override;
    util::Expected<nlohmann::json> create(const Resource& resource, std::string_view ns,
                                          const nlohmann::json& object) override;
    util::Expected<nlohmann::json> update(const Resource& resource, std::string_view ns,
                                          const nlohmann::json& object,
                                          std::string_view subresource = {}) override;
    util::Expected<void>
    remove(const Resource& resource, std::string_view ns, std::string_view name,
           std::optional<std::string> resource_version = std::nullopt) override;
    util::Expected<nlohmann::json> merge_patch(const Resource& resource, std::string_view ns,
                                               std::string_view name, const nlohmann::json& patch,
                                               std::string_view subresource = {}) override;
    util::Expected<nlohmann::json> json_patch(const Resource& resource, std::string_view ns,
                                              std::string_view name, nlohmann::json operations,
                                              std::optional<std::string> resource_version,
                                              std::string_view subresource = {}) override;
    util::Expected<nlohmann::json> apply(const Resource& resource, std::string_view ns,
                                         const nlohmann::json& object, const ApplyOptions& options,
                                         std::string_view subresource = {}) override;

private:
    using Key = std::tuple<std::string, std::string, std::string>; // resource, namespace, name
    struct Failure {
        std::string verb;
        std::string resource;
        util::Error error;
        int times;
    };

    static Key key_of(const Resource& resource, std::string_view ns, std::string_view name);
    // Records the call, asks the pass, and answers an injected failure; ok: go on.
    util::Expected<void> begin(std::string_view verb, const Resource& resource, std::string_view ns,
                               std::string_view name);
    nlohmann::json* stored(const Resource& resource, std::string_view ns, std::string_view name);
    // Stamps the next resourceVersion on `object` and stores it (or deletes it: a marked object
    // whose last finalizer went).
    nlohmann::json write(const Key& key, nlohmann::json object);
    // The object after a patch was worked out on a copy: for the status subresource only its
    // status is taken.
    util::Expected<nlohmann::json> store_patched(const Key& key, const nlohmann::json& before,
                                                 nlohmann::json after,
                                                 std::string_view subresource);

    std::map<Key, nlohmann::json> m_objects;
    long m_version = 0;
    long m_uids = 0;
    std::vector<Call> m_calls;
    std::vector<Failure> m_failures;
    std::shared_ptr<ApiPass> m_pass;
};

} // namespace shimkeeper::kubeapi
