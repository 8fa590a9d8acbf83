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

// A 2xx answer's body as JSON; any other answer the Error carrying the API's Status message.
util::Expected<json> object_of_answer(Method method, const std::string& path,
                                      const Response& response) {
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

// A DELETE, with a resourceVersion as its precondition when given.
util::Expected<Client::Request> removal_request(const Resource& resource, std::string_view ns,
                                                std::string_view name,
                                                const std::optional<std::string>& version) {
    Client::Request request{Method::del, TRY(object_path(resource, ns, name)), {}, {}};
    if (version) {
        json options = {{"apiVersion", "v1"},
                        {"kind", "DeleteOptions"},
                        {"preconditions", {{"resourceVersion", *version}}}};
        request.body = options.dump();
        request.content_type = "application/json";
    }
    return request;
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
        note_answer_to_pass(method, path, response);
        if (response.http_code != 429 || attempt >= m_throttle_retries) {
            break;
        }
        thread_local std::minstd_rand rng(std::random_device{}());
        std::this_thread::sleep_for(
            throttle_wait(response.retry_after, std::uniform_real_distribution<double>(0, 1)(rng)));
    }
    return object_of_answer(method, path, response);
}

void Client::note_answer_to_pass(Method method, const std::string& path, const Response& response) {
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
}

std::vector<util::Expected<json>> Client::call_together(const std::vector<Request>& requests) {
    std::vector<std::optional<util::Expected<json>>> answers(requests.size());
    std::vector<std::unique_ptr<Transfer>> prepared(requests.size());
    std::vector<Transfer*> sent;
    std::vector<std::size_t> sent_index;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const Request& request = requests[i];
        if (m_pass) {
            if (auto may = m_pass->before_request(); !may) {
                answers[i] = std::unexpected(std::move(may).error());
                continue;
            }
        }
        auto transfer =
            m_connection.prepare(request.method, request.path, request.body, request.content_type);
        if (!transfer) {
            if (m_pass && transfer.error().code() == util::ErrorCode::refused) {
                m_pass->note_refused(transfer.error());
            }
            answers[i] = std::unexpected(std::move(transfer).error());
            continue;
        }
        prepared[i] = std::move(*transfer);
        sent.push_back(prepared[i].get());
        sent_index.push_back(i);
    }
    std::vector<util::Expected<Response>> responses = m_connection.perform_together(sent);
    for (std::size_t k = 0; k < responses.size(); ++k) {
        const std::size_t i = sent_index[k];
        const Request& request = requests[i];
        if (!responses[k]) {
            if (m_pass) {
                m_pass->note_no_answer(responses[k].error());
            }
            answers[i] = std::unexpected(std::move(responses[k]).error());
            continue;
        }
        const long code = responses[k]->http_code;
        if (code == 401 || code == 429) { // a rotated token or throttling: call()'s own rules
            answers[i] = call(request.method, request.path, request.body, request.content_type);
            continue;
        }
        note_answer_to_pass(request.method, request.path, *responses[k]);
        answers[i] = object_of_answer(request.method, request.path, *responses[k]);
    }
    std::vector<util::Expected<json>> results;
    for (auto& answer : answers) {
        results.push_back(std::move(*answer));
    }
    return results;
}

std::vector<util::Expected<json>> Client::write_together(const Resource& resource,
                                                         std::string_view ns,
                                                         const std::vector<json>& objects) {
    std::vector<util::Expected<json>> results(objects.size(), json());
    std::vector<Request> requests;
    std::vector<std::size_t> asked;
    const auto path_of = [&](const json& object) -> util::Expected<std::string> {
        if (!carries_version(object)) {
            return collection_path(resource, ns);
        }
        return object_path(resource, ns, TRY(required_name_of(object)));
    };
    for (std::size_t i = 0; i < objects.size(); ++i) {
        const json& object = objects[i];
        auto path = path_of(object);
        if (!path) {
            results[i] = std::unexpected(std::move(path).error());
            continue;
        }
        requests.push_back({carries_version(object) ? Method::put : Method::post, *path,
                            object.dump(), "application/json"});
        asked.push_back(i);
    }
    std::vector<util::Expected<json>> answers = call_together(requests);
    for (std::size_t k = 0; k < answers.size(); ++k) {
        results[asked[k]] = std::move(answers[k]);
    }
    return results;
}

std::vector<util::Expected<void>> Client::remove_together(const Resource& resource,
                                                          std::string_view ns,
                                                          const std::vector<Removal>& removals) {
    std::vector<util::Expected<void>> results(removals.size());
    std::vector<Request> requests;
    std::vector<std::size_t> asked;
    for (std::size_t i = 0; i < removals.size(); ++i) {
        auto request =
            removal_request(resource, ns, removals[i].name, removals[i].resource_version);
        if (!request) {
            results[i] = std::unexpected(std::move(request).error());
            continue;
        }
        requests.push_back(std::move(*request));
        asked.push_back(i);
    }
    std::vector<util::Expected<json>> answers = call_together(requests);
    for (std::size_t k = 0; k < answers.size(); ++k) {
        if (!answers[k]) {
            results[asked[k]] = std::unexpected(std::move(answers[k]).error());
        }
    }
    return results;
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
    const Request request = TRY(removal_request(resource, ns, name, resource_version));
    TRY(call(request.method, request.path, request.body, request.content_type));
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
