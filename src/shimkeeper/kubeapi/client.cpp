#include "shimkeeper/kubeapi/client.hpp"

#include "shimkeeper/kubeapi/api_error.hpp"
#include "shimkeeper/kubeapi/retry_backoff.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

namespace shimkeeper::kubeapi {

namespace {

using nlohmann::json;

util::Expected<std::string> required_name_of(const json& object) {
    if (object.contains("metadata") && object["metadata"].is_object()) {
        std::string name = object["metadata"].value("name", "");
        if (!name.empty()) {
            return name;
        }
    }
    return util::fail(util::ErrorCode::invalid_input, "the object has no metadata.name");
}

} // namespace

util::Expected<Client> Client::from_kubeconfig(const std::filesystem::path& file) {
    return Client(TRY(load_kubeconfig(file)));
}

util::Expected<json> Client::call(Method method, const std::string& path, const std::string& body,
                                  std::string_view content_type) {
    Response response;
    bool token_renewed = false;
    for (int attempt = 0;; ++attempt) {
        if (m_pass) {
            TRY(m_pass->before_request());
        }
        auto prepared = m_connection.prepare(method, path, body, content_type);
        if (!prepared) {
            if (m_pass && prepared.error().code() == util::ErrorCode::refused) {
                m_pass->note_refused(prepared.error());
            }
            return std::unexpected(std::move(prepared.error()));
        }
        auto transfer = std::move(*prepared);
        auto performed = m_connection.perform(*transfer);
        if (!performed) {
            if (m_pass) {
                m_pass->note_no_answer(performed.error());
            }
            return std::unexpected(std::move(performed.error()));
        }
        response = std::move(*performed);
        // A token refused may have been rotated since it was read: asked once more with the new
        // one, so that a rotation costs no failed request.
        if (response.http_code == 401 && !token_renewed &&
            m_connection.renew_token_after_refusal(*transfer)) {
            token_renewed = true;
            continue;
        }
        if (m_pass && response.http_code >= 500) {
            // An API server that cannot reach its storage answers 5xx: no answer either.
            m_pass->note_no_answer(
                api_error(method_name(method), path, response.http_code, response.body));
        } else if (m_pass) {
            m_pass->note_answer();
            // A 401 only: a 403 mid-pass is one action refused (a policy), not the credential.
            if (response.http_code == 401) {
                m_pass->note_refused(
                    api_error(method_name(method), path, response.http_code, response.body));
            }
        }
        if (response.http_code != 429 || attempt >= m_throttle_retries) {
            break;
        }
        thread_local std::minstd_rand rng(std::random_device{}());
        std::this_thread::sleep_for(
            throttle_wait(response.retry_after, std::uniform_real_distribution<double>(0, 1)(rng)));
    }
    if (!response.ok()) {
        return std::unexpected(
            api_error(method_name(method), path, response.http_code, response.body));
    }
    json parsed = json::parse(response.body, nullptr, false);
    if (parsed.is_discarded()) {
        return util::fail(util::ErrorCode::network, std::string(method_name(method)) + " " + path +
                                                        ": the answer is not JSON");
    }
    return parsed;
}

util::Expected<json> Client::get(const Resource& resource, std::string_view ns,
                                 std::string_view name) {
    return call(Method::get, TRY(object_path(resource, ns, name)));
}

util::Expected<ObjectList> Client::list(const Resource& resource, std::string_view ns,
                                        const ListOptions& options) {
    std::string base = TRY(collection_path(resource, ns));
    ObjectList result;
    std::string next;
    do {
        Query query;
        if (!options.label_selector.empty()) {
            query.emplace_back("labelSelector", options.label_selector);
        }
        if (!options.field_selector.empty()) {
            query.emplace_back("fieldSelector", options.field_selector);
        }
        if (options.limit > 0) {
            query.emplace_back("limit", std::to_string(options.limit));
        }
        if (!next.empty()) {
            query.emplace_back("continue", next);
        }
        json page = TRY(call(Method::get, base + to_query(query)));
        for (auto& item : page.value("items", json::array())) {
            result.items.push_back(std::move(item));
        }
        const json& meta = page.value("metadata", json::object());
        result.resource_version = meta.value("resourceVersion", "");
        next = meta.value("continue", "");
    } while (!next.empty());
    return result;
}

util::Expected<json> Client::create(const Resource& resource, std::string_view ns,
                                    const json& object) {
    return call(Method::post, TRY(collection_path(resource, ns)), object.dump(),
                "application/json");
}

util::Expected<json> Client::update(const Resource& resource, std::string_view ns,
                                    const json& object, std::string_view subresource) {
    std::string name = TRY(required_name_of(object));
    return call(Method::put, TRY(object_path(resource, ns, name, subresource)), object.dump(),
                "application/json");
}

util::Expected<void> Client::remove(const Resource& resource, std::string_view ns,
                                    std::string_view name,
                                    std::optional<std::string> resource_version) {
    std::string path = TRY(object_path(resource, ns, name));
    if (resource_version) {
        json options = {{"apiVersion", "v1"},
                        {"kind", "DeleteOptions"},
                        {"preconditions", {{"resourceVersion", *resource_version}}}};
        TRY(call(Method::del, path, options.dump(), "application/json"));
    } else {
        TRY(call(Method::del, path));
    }
    return {};
}

util::Expected<json> Client::merge_patch(const Resource& resource, std::string_view ns,
                                         std::string_view name, const json& patch,
                                         std::string_view subresource) {
    return call(Method::patch, TRY(object_path(resource, ns, name, subresource)), patch.dump(),
                "application/merge-patch+json");
}

util::Expected<json> Client::json_patch(const Resource& resource, std::string_view ns,
                                        std::string_view name, json operations,
                                        std::optional<std::string> resource_version,
                                        std::string_view subresource) {
    if (!operations.is_array()) {
        return util::fail(util::ErrorCode::internal, "a JSON patch is an array of operations");
    }
    if (resource_version) {
        operations.insert(operations.begin(), json{{"op", "test"},
                                                   {"path", "/metadata/resourceVersion"},
                                                   {"value", *resource_version}});
    }
    auto patched = call(Method::patch, TRY(object_path(resource, ns, name, subresource)),
                        operations.dump(), "application/json-patch+json");
    // A failed `test` comes back as 422 Invalid with a generic message: read the object to
    // tell a stale version (a conflict for the caller, like a 409) from a bad patch.
    if (!patched && resource_version && patched.error().code() == util::ErrorCode::invalid_input) {
        auto now = get(resource, ns, name);
        std::string current =
            now ? now->value("metadata", json::object()).value("resourceVersion", "") : "";
        if (now && current != *resource_version) {
            return util::fail(util::ErrorCode::conflict,
                              patched.error().message() + ": the object changed since version " +
                                  *resource_version + " (now " + current + ")");
        }
    }
    return patched;
}

util::Expected<json> Client::apply(const Resource& resource, std::string_view ns,
                                   const json& object, const ApplyOptions& options,
                                   std::string_view subresource) {
    std::string name = TRY(required_name_of(object));
    Query query{{"fieldManager", options.field_manager}};
    if (options.force == ApplyOptions::Force::yes) {
        query.emplace_back("force", "true");
    }
    std::string path = TRY(object_path(resource, ns, name, subresource)) + to_query(query);
    return call(Method::patch, path, object.dump(), "application/apply-patch+yaml");
}

} // namespace shimkeeper::kubeapi
