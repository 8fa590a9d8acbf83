#include "fake_api_client.hpp"

#include "shimkeeper/util/utc_time.hpp"

#include <algorithm>

namespace shimkeeper::kubeapi {

using nlohmann::json;

namespace {

std::string version_of(const json& object) {
    return object.value("metadata", json::object()).value("resourceVersion", "");
}

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && text.front() == ' ') {
        text.remove_prefix(1);
    }
    while (!text.empty() && text.back() == ' ') {
        text.remove_suffix(1);
    }
    return text;
}

// The equality-based label selector terms (key=value, key==value, key!=value, key, !key), joined
// by commas, as the code under test writes them; set-based terms are refused.
util::Expected<bool> labels_match(const json& object, std::string_view selector) {
    const json labels = object.value("metadata", json::object()).value("labels", json::object());
    const auto label = [&](std::string_view key) -> std::optional<std::string> {
        const auto found = labels.find(std::string(key));
        if (found == labels.end() || !found->is_string()) {
            return std::nullopt;
        }
        return found->get<std::string>();
    };
    while (!selector.empty()) {
        const std::size_t comma = selector.find(',');
        const std::string_view term = trimmed(selector.substr(0, comma));
        selector =
            comma == std::string_view::npos ? std::string_view() : selector.substr(comma + 1);
        if (term.empty()) {
            continue;
        }
        if (term.find(" in ") != std::string_view::npos ||
            term.find(" notin ") != std::string_view::npos) {
            return util::fail(util::ErrorCode::invalid_input,
                              "the fake API server reads no set-based selector: " +
                                  std::string(term));
        }
        if (term.front() == '!') {
            if (label(trimmed(term.substr(1)))) {
                return false;
            }
        } else if (const std::size_t not_equal = term.find("!="); not_equal != term.npos) {
            const auto value = label(trimmed(term.substr(0, not_equal)));
            if (value && *value == trimmed(term.substr(not_equal + 2))) {
                return false;
            }
        } else if (const std::size_t equal = term.find('='); equal != term.npos) {
            const std::size_t value_at =
                term.substr(equal).starts_with("==") ? equal + 2 : equal + 1;
            const auto value = label(trimmed(term.substr(0, equal)));
            if (!value || *value != trimmed(term.substr(value_at))) {
                return false;
            }
        } else if (!label(term)) {
            return false;
        }
    }
    return true;
}

util::Error not_found(const Resource& resource, std::string_view name) {
    return util::Error(util::ErrorCode::not_found, resource.plural + " \"" + std::string(name) +
                                                       "\" not found (fake API server)");
}

util::Error stale(const Resource& resource, std::string_view name, const std::string& asked,
                  const std::string& current) {
    return util::Error(util::ErrorCode::conflict,
                       "Operation cannot be fulfilled on " + resource.plural + " \"" +
                           std::string(name) + "\": the object has been modified (version " +
                           asked + ", now " + current + ") (fake API server)");
}

} // namespace

FakeApiClient::Key FakeApiClient::key_of(const Resource& resource, std::string_view ns,
                                         std::string_view name) {
    return {resource.api_version() + "/" + resource.plural, std::string(ns), std::string(name)};
}

json FakeApiClient::put(const Resource& resource, std::string_view ns, json object) {
    json& metadata = object["metadata"];
    if (!ns.empty()) {
        metadata["namespace"] = ns;
    }
    if (!metadata.contains("uid")) {
        metadata["uid"] = "uid-" + std::to_string(++m_uids);
    }
    if (!metadata.contains("creationTimestamp")) {
        metadata["creationTimestamp"] = util::now_rfc3339();
    }
    if (!metadata.contains("generation")) {
        metadata["generation"] = 1;
    }
    const std::string name = metadata.value("name", "");
    return write(key_of(resource, ns, name), std::move(object));
}

std::optional<json> FakeApiClient::find(const Resource& resource, std::string_view ns,
                                        std::string_view name) const {
    const auto found = m_objects.find(key_of(resource, ns, name));
    if (found == m_objects.end()) {
        return std::nullopt;
    }
    return found->second;
}

std::vector<json> FakeApiClient::objects(const Resource& resource, std::string_view ns) const {
    std::vector<json> out;
    const std::string kind = std::get<0>(key_of(resource, ns, ""));
    for (const auto& [key, object] : m_objects) {
        if (std::get<0>(key) == kind && std::get<1>(key) == ns) {
            out.push_back(object);
        }
    }
    return out;
}

std::vector<FakeApiClient::Call> FakeApiClient::calls_of(std::string_view verb,
                                                         std::string_view resource) const {
    std::vector<Call> out;
    for (const Call& call : m_calls) {
        if (call.verb == verb && (resource.empty() || call.resource == resource)) {
            out.push_back(call);
        }
    }
    return out;
}

void FakeApiClient::fail_next(std::string verb, std::string resource, util::Error error,
                              int times) {
    m_failures.push_back({std::move(verb), std::move(resource), std::move(error), times});
}

util::Expected<void> FakeApiClient::begin(std::string_view verb, const Resource& resource,
                                          std::string_view ns, std::string_view name) {
    // The real client refuses a path it cannot make before it asks anything.
    if (verb == "create" || verb == "list") {
        TRY(collection_path(resource, ns));
    } else {
        TRY(object_path(resource, ns, name));
    }
    if (m_pass) {
        TRY(m_pass->before_request()); // not sent: the API server never sees it
    }
    m_calls.push_back({std::string(verb), resource.plural, std::string(name)});
    const auto failure = std::ranges::find_if(m_failures, [&](const Failure& f) {
        return f.verb == verb && (f.resource.empty() || f.resource == resource.plural);
    });
    if (failure == m_failures.end()) {
        if (m_pass) {
            m_pass->note_answer();
        }
        return {};
    }
    util::Error error = failure->error;
    if (--failure->times <= 0) {
        m_failures.erase(failure);
    }
    if (m_pass && error.code() == util::ErrorCode::network) {
        m_pass->note_no_answer(error);
    } else if (m_pass) {
        m_pass->note_answer();
    }
    return std::unexpected(std::move(error));
}

json* FakeApiClient::stored(const Resource& resource, std::string_view ns, std::string_view name) {
    const auto found = m_objects.find(key_of(resource, ns, name));
    return found == m_objects.end() ? nullptr : &found->second;
}

json FakeApiClient::write(const Key& key, json object) {
    json& metadata = object["metadata"];
    metadata["resourceVersion"] = std::to_string(++m_version);
    const json finalizers = metadata.value("finalizers", json::array());
    if (metadata.contains("deletionTimestamp") && finalizers.empty()) {
        m_objects.erase(key); // marked for deletion and nothing holds it any more
        return object;
    }
    m_objects[key] = object;
    return object;
}

util::Expected<json> FakeApiClient::store_patched(const Key& key, const json& before, json after,
                                                  std::string_view subresource) {
    json result = before;
    if (subresource == "status") {
        if (after.contains("status")) {
            result["status"] = after["status"];
        } else {
            result.erase("status");
        }
    } else if (!subresource.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "the fake API server knows no subresource " + std::string(subresource));
    } else {
        result = std::move(after);
        // What the server owns stays the server's.
        for (const char* field : {"uid", "creationTimestamp", "deletionTimestamp", "namespace"}) {
            if (before["metadata"].contains(field)) {
                result["metadata"][field] = before["metadata"][field];
            }
        }
        const long generation = before["metadata"].value("generation", 1L);
        result["metadata"]["generation"] =
            result.value("spec", json()) != before.value("spec", json()) ? generation + 1
                                                                         : generation;
    }
    return write(key, std::move(result));
}

util::Expected<json> FakeApiClient::get(const Resource& resource, std::string_view ns,
                                        std::string_view name) {
    TRY(begin("get", resource, ns, name));
    const json* object = stored(resource, ns, name);
    if (object == nullptr) {
        return std::unexpected(not_found(resource, name));
    }
    return *object;
}

util::Expected<ObjectList> FakeApiClient::list(const Resource& resource, std::string_view ns,
                                               const ListOptions& options) {
    TRY(begin("list", resource, ns, ""));
    if (!options.field_selector.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "the fake API server reads no field selector: " + options.field_selector);
    }
    ObjectList result;
    const std::string kind = std::get<0>(key_of(resource, ns, ""));
    for (const auto& [key, object] : m_objects) {
        // A namespaced resource listed without a namespace: across all of them.
        if (std::get<0>(key) != kind || (!ns.empty() && std::get<1>(key) != ns)) {
            continue;
        }
        if (TRY(labels_match(object, options.label_selector))) {
            result.items.push_back(object);
        }
    }
    result.resource_version = std::to_string(m_version);
    return result;
}

util::Expected<json> FakeApiClient::create(const Resource& resource, std::string_view ns,
                                           const json& object) {
    const std::string name = object.value("metadata", json::object()).value("name", "");
    TRY(begin("create", resource, ns, name));
    if (name.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "create " + resource.plural + ": the object has no metadata.name");
    }
    if (!version_of(object).empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          "create " + resource.plural + "/" + name +
                              ": resourceVersion should not be set on objects to be created");
    }
    if (stored(resource, ns, name) != nullptr) {
        return util::fail(util::ErrorCode::conflict,
                          resource.plural + " \"" + name + "\" already exists (AlreadyExists)");
    }
    json fresh = object;
    fresh["metadata"].erase("uid");
    fresh["metadata"].erase("creationTimestamp");
    fresh["metadata"].erase("generation");
    return put(resource, ns, std::move(fresh));
}

util::Expected<json> FakeApiClient::update(const Resource& resource, std::string_view ns,
                                           const json& object, std::string_view subresource) {
    const std::string name = object.value("metadata", json::object()).value("name", "");
    TRY(begin("update", resource, ns, name));
    const json* current = stored(resource, ns, name);
    if (current == nullptr) {
        return std::unexpected(not_found(resource, name));
    }
    // An update without a resourceVersion overwrites whatever is there, as the server allows.
    const std::string asked = version_of(object);
    if (!asked.empty() && asked != version_of(*current)) {
        return std::unexpected(stale(resource, name, asked, version_of(*current)));
    }
    return store_patched(key_of(resource, ns, name), *current, object, subresource);
}

util::Expected<void> FakeApiClient::remove(const Resource& resource, std::string_view ns,
                                           std::string_view name,
                                           std::optional<std::string> resource_version) {
    TRY(begin("remove", resource, ns, name));
    json* current = stored(resource, ns, name);
    if (current == nullptr) {
        return std::unexpected(not_found(resource, name));
    }
    if (resource_version && *resource_version != version_of(*current)) {
        return std::unexpected(stale(resource, name, *resource_version, version_of(*current)));
    }
    json& metadata = (*current)["metadata"];
    if (!metadata.value("finalizers", json::array()).empty()) {
        if (!metadata.contains("deletionTimestamp")) {
            metadata["deletionTimestamp"] = util::now_rfc3339();
            write(key_of(resource, ns, name), *current);
        }
        return {};
    }
    m_objects.erase(key_of(resource, ns, name));
    return {};
}

util::Expected<json> FakeApiClient::merge_patch(const Resource& resource, std::string_view ns,
                                                std::string_view name, const json& patch,
                                                std::string_view subresource) {
    TRY(begin("merge_patch", resource, ns, name));
    const json* current = stored(resource, ns, name);
    if (current == nullptr) {
        return std::unexpected(not_found(resource, name));
    }
    // A resourceVersion in the patch is a precondition, as on the API server.
    const std::string asked = version_of(patch);
    if (!asked.empty() && asked != version_of(*current)) {
        return std::unexpected(stale(resource, name, asked, version_of(*current)));
    }
    json after = *current;
    after.merge_patch(patch);
    return store_patched(key_of(resource, ns, name), *current, std::move(after), subresource);
}

util::Expected<json> FakeApiClient::json_patch(const Resource& resource, std::string_view ns,
                                               std::string_view name, json operations,
                                               std::optional<std::string> resource_version,
                                               std::string_view subresource) {
    TRY(begin("json_patch", resource, ns, name));
    const json* current = stored(resource, ns, name);
    if (current == nullptr) {
        return std::unexpected(not_found(resource, name));
    }
    if (!operations.is_array()) {
        return util::fail(util::ErrorCode::internal, "a JSON patch is an array of operations");
    }
    if (resource_version) {
        // The real client's `test` on /metadata/resourceVersion, failed: a conflict.
        if (*resource_version != version_of(*current)) {
            return std::unexpected(stale(resource, name, *resource_version, version_of(*current)));
        }
    }
    json after;
    try {
        after = current->patch(operations);
    } catch (const json::exception& e) {
        return util::fail(util::ErrorCode::invalid_input,
                          "json_patch " + resource.plural + "/" + std::string(name) +
                              ": the patch does not apply: " + e.what() + " (fake API server)");
    }
    return store_patched(key_of(resource, ns, name), *current, std::move(after), subresource);
}

// Approximated as create-or-merge: field ownership is not modelled.
util::Expected<json> FakeApiClient::apply(const Resource& resource, std::string_view ns,
                                          const json& object, const ApplyOptions& /*options*/,
                                          std::string_view subresource) {
    const std::string name = object.value("metadata", json::object()).value("name", "");
    TRY(begin("apply", resource, ns, name));
    const json* current = stored(resource, ns, name);
    if (current == nullptr) {
        return put(resource, ns, object);
    }
    json after = *current;
    after.merge_patch(object);
    return store_patched(key_of(resource, ns, name), *current, std::move(after), subresource);
}

} // namespace shimkeeper::kubeapi
