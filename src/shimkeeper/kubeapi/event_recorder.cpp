#include "shimkeeper/kubeapi/event_recorder.hpp"

#include "shimkeeper/kubeapi/micro_time.hpp"

#include <cstdio>

namespace shimkeeper::kubeapi {

using nlohmann::json;

namespace {

constexpr std::size_t k_note_limit = 1024; // the API refuses longer notes

} // namespace

ObjectReference ObjectReference::of(const json& object) {
    const json meta = object.value("metadata", json::object());
    return {object.value("apiVersion", ""), object.value("kind", ""), meta.value("name", ""),
            meta.value("namespace", ""), meta.value("uid", "")};
}

std::string event_namespace_for(const ObjectReference& regarding) {
    return regarding.namespace_name.empty() ? "default" : regarding.namespace_name;
}

json build_event(const EventSource& source, const ObjectReference& regarding, EventType type,
                 const std::string& reason, const std::string& action, const std::string& note,
                 std::chrono::system_clock::time_point now) {
    // Unique per emission, readable in `kubectl get events`: the object's name and the time.
    auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos.count()));
    json reference = {
        {"apiVersion", regarding.api_version}, {"kind", regarding.kind}, {"name", regarding.name}};
    if (!regarding.namespace_name.empty()) {
        reference["namespace"] = regarding.namespace_name;
    }
    if (!regarding.uid.empty()) {
        reference["uid"] = regarding.uid;
    }
    std::string cut = note.size() > k_note_limit ? note.substr(0, k_note_limit) : note;
    return {{"apiVersion", "events.k8s.io/v1"},
            {"kind", "Event"},
            {"metadata",
             {{"name", regarding.name + suffix}, {"namespace", event_namespace_for(regarding)}}},
            {"eventTime", micro_time(now)},
            {"reportingController", source.controller},
            {"reportingInstance", source.instance},
            {"action", action},
            {"reason", reason},
            {"regarding", reference},
            {"note", cut},
            {"type", type == EventType::warning ? "Warning" : "Normal"}};
}

util::Expected<json> EventRecorder::emit(const ObjectReference& regarding, EventType type,
                                         const std::string& reason, const std::string& action,
                                         const std::string& note) {
    json event = build_event(m_source, regarding, type, reason, action, note,
                             std::chrono::system_clock::now());
    return m_client.create(events_resource(), event_namespace_for(regarding), event);
}

} // namespace shimkeeper::kubeapi
