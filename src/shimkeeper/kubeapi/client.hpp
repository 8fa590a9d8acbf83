// The real ApiClient (api_client.hpp): the REST verbs on Kubernetes objects, as JSON over HTTP.
// Calls block, each within a bound (the daemon's reconcile is synchronous anyway;
// request_bound.hpp); watches stream through watch.hpp instead, on this client's connection().
// Any non-2xx answer becomes an Error carrying the API's Status message (see api_error.hpp).
#pragma once

#include "shimkeeper/kubeapi/api_client.hpp"
#include "shimkeeper/kubeapi/connection.hpp"
#include "shimkeeper/kubeapi/request_bound.hpp"
#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/util/error.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::kubeapi {

class Client final : public ApiClient {
public:
    explicit Client(KubeConfig config) : m_connection(std::move(config)) {}
    static util::Expected<Client> from_kubeconfig(const std::filesystem::path& file);

    Connection& connection() { return m_connection; }
    // A 429 (the API server's max-inflight limit, or priority and fairness shedding load) is
    // asked again after its Retry-After (1 s without one, at most 2 s), up to this many times, as
    // client-go does; 0 for a caller that would rather give up at once (a waiting node's try for
    // a rollout slot: losing it costs nothing, and asking again adds to the load).
    void set_throttle_retries(int retries) { m_throttle_retries = retries; }
    // The pass this client's requests belong to (request_bound.hpp); none: each stands alone.
    void join_pass(std::shared_ptr<ApiPass> pass) { m_pass = std::move(pass); }
    const std::shared_ptr<ApiPass>& pass() const override { return m_pass; }

    // The verbs of ApiClient, with its default arguments repeated: a caller holding a Client
    // gets the same defaults as one holding the interface.
    util::Expected<nlohmann::json> get(const Resource& resource, std::string_view ns,
                                       std::string_view name) override;
    // Every page (limit/continue), joined; the list's resourceVersion is the last page's.
    util::Expected<ObjectList> list(const Resource& resource, std::string_view ns,
                                    const ListOptions& options = {}) override;
    util::Expected<nlohmann::json> create(const Resource& resource, std::string_view ns,
                                          const nlohmann::json& object) override;
    // PUT of the whole object; its metadata.resourceVersion is the precondition (409 if stale).
    util::Expected<nlohmann::json> update(const Resource& resource, std::string_view ns,
                                          const nlohmann::json& object,
                                          std::string_view subresource = {}) override;
    // With a resourceVersion, deletes only that version of the object (409 otherwise).
    util::Expected<void>
    remove(const Resource& resource, std::string_view ns, std::string_view name,
           std::optional<std::string> resource_version = std::nullopt) override;
    util::Expected<nlohmann::json> merge_patch(const Resource& resource, std::string_view ns,
                                               std::string_view name, const nlohmann::json& patch,
                                               std::string_view subresource = {}) override;
    // An RFC 6902 patch; with a resourceVersion, a `test` on /metadata/resourceVersion runs
    // first, so the patch applies only to that version (the server answers 422 otherwise,
    // turned into a conflict here).
    util::Expected<nlohmann::json> json_patch(const Resource& resource, std::string_view ns,
                                              std::string_view name, nlohmann::json operations,
                                              std::optional<std::string> resource_version,
                                              std::string_view subresource = {}) override;
    // Server-side apply of a (partial) object that names itself (apiVersion, kind, name).
    util::Expected<nlohmann::json> apply(const Resource& resource, std::string_view ns,
                                         const nlohmann::json& object, const ApplyOptions& options,
                                         std::string_view subresource = {}) override;

    // Sent at once over one connection (Connection::perform_together).
    std::vector<util::Expected<nlohmann::json>>
    write_together(const Resource& resource, std::string_view ns,
                   const std::vector<nlohmann::json>& objects) override;
    std::vector<util::Expected<void>>
    remove_together(const Resource& resource, std::string_view ns,
                    const std::vector<Removal>& removals) override;

    // One request, any verb: a 2xx body parsed as JSON, anything else an Error.
    util::Expected<nlohmann::json> call(Method method, const std::string& path,
                                        const std::string& body = {},
                                        std::string_view content_type = {});
    struct Request {
        Method method = Method::get;
        std::string path;
        std::string body;
        std::string content_type; // empty: no body
    };
    // Several requests sent at once, each answered as call() answers it, in the order given. One
    // answered 401 (a token rotated) or 429 (throttled) is asked again alone, through call().
    std::vector<util::Expected<nlohmann::json>> call_together(const std::vector<Request>& requests);

private:
    // Tells the pass (if any) what an answer says of the API server: answered, or not (5xx),
    // or the credential refused (401).
    void note_answer_to_pass(Method method, const std::string& path, const Response& response);
    Connection m_connection;
    int m_throttle_retries = 3;
    std::shared_ptr<ApiPass> m_pass;
};

} // namespace shimkeeper::kubeapi
