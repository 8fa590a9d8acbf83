// The REST verbs on Kubernetes objects that the decision-making code asks through: the seam
// between what the coordinator, the slot keeper and the election decide and the API server that
// answers. `Client` (client.hpp) is the real one, over HTTP; the unit tests' fake keeps objects in
// memory and records the calls, so that those decisions are tested without an API server.
//
// Errors carry the ErrorCode an API server's answer maps to (api_error.hpp): not_found (404),
// conflict (409, or a stale resourceVersion precondition), refused (401, 403), invalid_input
// (400, 422), network (no answer, 5xx). Only the verbs are here: watches, the connection and
// throttling belong to the real client alone.
#pragma once

#include "shimkeeper/kubeapi/request_bound.hpp"
#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/util/error.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::kubeapi {

struct ListOptions {
    std::string label_selector;
    std::string field_selector;
    long limit = 500; // per page; 0 asks for everything at once
};

struct ObjectList {
    std::vector<nlohmann::json> items;
    std::string resource_version; // of the whole list: where a watch starts
};

struct ApplyOptions {
    std::string field_manager = "shimkeeper";
    enum class Force { no, yes } force = Force::no; // take fields other managers own
};

class ApiClient {
public:
    virtual ~ApiClient() = default;

    // The pass this client's requests belong to (request_bound.hpp); none: each stands alone.
    // A pass's owner reads it to stop once a request got no answer.
    virtual const std::shared_ptr<ApiPass>& pass() const = 0;

    virtual util::Expected<nlohmann::json> get(const Resource& resource, std::string_view ns,
                                               std::string_view name) = 0;
    // Every page (limit/continue), joined; the list's resourceVersion is the last page's.
    virtual util::Expected<ObjectList> list(const Resource& resource, std::string_view ns,
                                            const ListOptions& options = {}) = 0;
    virtual util::Expected<nlohmann::json> create(const Resource& resource, std::string_view ns,
                                                  const nlohmann::json& object) = 0;
    // PUT of the whole object; its metadata.resourceVersion is the precondition (409 if stale).
    virtual util::Expected<nlohmann::json> update(const Resource& resource, std::string_view ns,
                                                  const nlohmann::json& object,
                                                  std::string_view subresource = {}) = 0;
    // With a resourceVersion, deletes only that version of the object (409 otherwise).
    virtual util::Expected<void>
    remove(const Resource& resource, std::string_view ns, std::string_view name,
           std::optional<std::string> resource_version = std::nullopt) = 0;
    virtual util::Expected<nlohmann::json> merge_patch(const Resource& resource,
                                                       std::string_view ns, std::string_view name,
                                                       const nlohmann::json& patch,
                                                       std::string_view subresource = {}) = 0;
    // An RFC 6902 patch; with a resourceVersion it applies only to that version (a conflict
    // otherwise).
    virtual util::Expected<nlohmann::json> json_patch(const Resource& resource, std::string_view ns,
                                                      std::string_view name,
                                                      nlohmann::json operations,
                                                      std::optional<std::string> resource_version,
                                                      std::string_view subresource = {}) = 0;
    // Server-side apply of a (partial) object that names itself (apiVersion, kind, name).
    virtual util::Expected<nlohmann::json> apply(const Resource& resource, std::string_view ns,
                                                 const nlohmann::json& object,
                                                 const ApplyOptions& options,
                                                 std::string_view subresource = {}) = 0;

    // Several writes, or several deletes, as one batch: the results in the order given, each
    // what create(), update() or remove() would have said. In write_together an object that
    // carries metadata.resourceVersion replaces that version of itself (update(): a conflict when
    // the stored one is another), one without is created. The real client sends a batch at once
    // (multiplexed over one HTTP/2 connection), so it takes about one request's time instead of
    // one per object; these defaults ask one after another.
    struct Removal {
        std::string name;
        std::optional<std::string> resource_version; // as remove()'s precondition
    };
    virtual std::vector<util::Expected<nlohmann::json>>
    write_together(const Resource& resource, std::string_view ns,
                   const std::vector<nlohmann::json>& objects) {
        std::vector<util::Expected<nlohmann::json>> results;
        for (const nlohmann::json& object : objects) {
            results.push_back(carries_version(object) ? update(resource, ns, object)
                                                      : create(resource, ns, object));
        }
        return results;
    }
    static bool carries_version(const nlohmann::json& object) {
        const auto where = nlohmann::json::json_pointer("/metadata/resourceVersion");
        return object.contains(where) && object.at(where).is_string() &&
               !object.at(where).get_ref<const std::string&>().empty();
    }
    virtual std::vector<util::Expected<void>>
    remove_together(const Resource& resource, std::string_view ns,
                    const std::vector<Removal>& removals) {
        std::vector<util::Expected<void>> results;
        for (const Removal& removal : removals) {
            results.push_back(remove(resource, ns, removal.name, removal.resource_version));
        }
        return results;
    }

protected:
    // Copied and moved only as the concrete client it is, never sliced through the interface.
    ApiClient() = default;
    ApiClient(const ApiClient&) = default;
    ApiClient(ApiClient&&) = default;
    ApiClient& operator=(const ApiClient&) = default;
    ApiClient& operator=(ApiClient&&) = default;
};

} // namespace shimkeeper::kubeapi
