#include "shimkeeper/kubeapi/watch_state.hpp"

#include "shimkeeper/kubeapi/resource.hpp"
#include "shimkeeper/kubeapi/retry_backoff.hpp"

namespace shimkeeper::kubeapi {

using nlohmann::json;

WatchState::WatchState(WatchSettings settings, std::uint32_t seed)
    : m_settings(std::move(settings)), m_rng(seed) {
    m_phase = first_phase();
    if (!m_settings.resume_from.empty()) {
        m_phase = Phase::watch;
        m_resource_version = m_settings.resume_from;
    }
}

std::string WatchState::next_query() {
    Query query;
    if (!m_settings.label_selector.empty()) {
        query.emplace_back("labelSelector", m_settings.label_selector);
    }
    if (!m_settings.field_selector.empty()) {
        query.emplace_back("fieldSelector", m_settings.field_selector);
    }
    if (m_phase == Phase::list) {
        if (m_continue.empty()) {
            ++m_lists;
        }
        if (m_settings.page_limit > 0) {
            query.emplace_back("limit", std::to_string(m_settings.page_limit));
        }
        if (!m_continue.empty()) {
            query.emplace_back("continue", m_continue);
        }
        return to_query(query);
    }
    auto min = m_settings.min_timeout.count();
    auto timeout = min + static_cast<long long>(std::uniform_int_distribution<long long>(
                             0, std::max<long long>(min - 1, 0))(m_rng));
    ++m_watches;
    query.emplace_back("watch", "true");
    query.emplace_back("allowWatchBookmarks", "true");
    if (m_phase == Phase::initial) {
        // No resourceVersion: the collection as of a consistent read, then what follows it.
        query.emplace_back("sendInitialEvents", "true");
        query.emplace_back("resourceVersionMatch", "NotOlderThan");
    } else {
        query.emplace_back("resourceVersion", m_resource_version);
    }
    query.emplace_back("timeoutSeconds", std::to_string(timeout));
    return to_query(query);
}

std::optional<WatchEvent> WatchState::on_initial_line(const std::string& type, json& object) {
    if (type == "ADDED") {
        m_items.push_back(std::move(object));
        return std::nullopt;
    }
    const json annotations =
        object.value("metadata", json::object()).value("annotations", json::object());
    if (type != "BOOKMARK" || annotations.value("k8s.io/initial-events-end", "") != "true") {
        return std::nullopt; // nothing else comes before the collection is whole
    }
    m_phase = Phase::watch;
    WatchEvent synced;
    synced.items = std::move(m_items);
    m_items.clear();
    return synced;
}

std::optional<WatchEvent> WatchState::on_list_page(std::string_view body) {
    json page = json::parse(body, nullptr, false);
    if (!page.is_object() || !page.contains("items")) {
        failed("a list answer that is not a list");
        return std::nullopt;
    }
    for (auto& item : page["items"]) {
        m_items.push_back(std::move(item));
    }
    const json meta = page.value("metadata", json::object());
    m_continue = meta.value("continue", "");
    succeeded();
    if (!m_continue.empty()) {
        return std::nullopt;
    }
    m_resource_version = meta.value("resourceVersion", "");
    m_phase = Phase::watch;
    WatchEvent synced;
    synced.items = std::move(m_items);
    m_items.clear();
    return synced;
}

WatchState::LineOutcome WatchState::on_watch_line(std::string_view line) {
    json event = json::parse(line, nullptr, false);
    if (!event.is_object() || !event.contains("object") || !event["object"].is_object()) {
        failed("a watch line that is not an event");
        return {std::nullopt, true};
    }
    std::string type = event.value("type", "");
    json& object = event["object"];
    if (type == "ERROR") {
        on_http_error(parse_status(0, object.dump()));
        return {std::nullopt, true};
    }
    if (object.contains("metadata") && object["metadata"].is_object()) {
        std::string version = object["metadata"].value("resourceVersion", "");
        if (!version.empty()) {
            m_resource_version = version;
        }
    }
    succeeded();
    if (m_phase == Phase::initial) {
        return {on_initial_line(type, object), false};
    }
    WatchEvent out;
    if (type == "ADDED") {
        out.kind = WatchEvent::Kind::added;
    } else if (type == "MODIFIED") {
        out.kind = WatchEvent::Kind::modified;
    } else if (type == "DELETED") {
        out.kind = WatchEvent::Kind::deleted;
    } else {
        return {}; // BOOKMARK, or a type from a newer server: only its resourceVersion counts
    }
    out.object = std::move(object);
    return {std::move(out), false};
}

void WatchState::on_stream_end(std::chrono::milliseconds lasted, bool had_lines) {
    if (m_phase == Phase::initial) {
        m_items.clear(); // streamed again whole, after a pause: no hot loop on a server cutting it
        failed("the watch list ended before the whole collection came");
        return;
    }
    if (!had_lines && lasted < std::chrono::seconds(1)) {
        failed("the server ended the watch at once");
        return;
    }
    m_delay = std::chrono::milliseconds(0); // a rotation: watch again from where we are
}

void WatchState::on_http_error(const ApiStatus& status) {
    if (status.http_code == 410) {
        m_last_problem = "410 Gone: " + status.message;
        relist();
        return;
    }
    std::string problem = "HTTP " + std::to_string(status.http_code);
    if (!status.message.empty()) {
        problem += ": " + status.message;
    }
    if (m_phase == Phase::initial && (status.http_code == 400 || status.http_code == 422)) {
        // A server without watch lists (or with them off) refuses the parameters: list + watch,
        // from now on, at once.
        m_settings.stream_initial = false;
        m_last_problem = std::move(problem) + " (a watch list; listing instead)";
        relist();
        return;
    }
    if (m_phase != Phase::watch) { // a failed page or initial stream: the list starts over
        m_continue.clear();
        m_items.clear();
    }
    failed(std::move(problem));
    m_refused = status.http_code == 401 || status.http_code == 403;
}

void WatchState::on_transport_error(std::string problem) {
    if (m_phase != Phase::watch) {
        m_continue.clear();
        m_items.clear();
    }
    failed(std::move(problem));
}

void WatchState::relist() {
    m_phase = first_phase();
    m_resource_version.clear();
    m_continue.clear();
    m_items.clear();
    m_delay = std::chrono::milliseconds(0);
}

void WatchState::failed(std::string problem) {
    m_last_problem = std::move(problem);
    m_refused = false; // on_http_error says when it was a refusal
    ++m_failures;
    double unit = std::uniform_real_distribution<double>(0.0, 1.0)(m_rng);
    m_delay = retry_backoff(m_failures, m_settings.backoff_initial, m_settings.backoff_max, unit);
}

void WatchState::succeeded() {
    m_failures = 0;
    m_refused = false;
    m_delay = std::chrono::milliseconds(0);
}

} // namespace shimkeeper::kubeapi
