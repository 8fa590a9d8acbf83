// Events (events.k8s.io/v1) about an object, for `kubectl describe` and `kubectl events`.
// Where an Event may live is the API server's rule, not ours: an Event about a namespaced object
// goes into that object's namespace; one about a cluster-scoped object (a Shim, a Node) must go
// into "default" (the server refuses any other namespace for it). Emitting is best effort for the
// caller: an Error is returned, never thrown, and the caller logs it and goes on.
#pragma once

#include "shimkeeper/kubeapi/api_client.hpp"

#include <chrono>
#include <string>

namespace shimkeeper::kubeapi {

struct ObjectReference {
    std::string api_version; // "v1", "containerd.x-k8s.io/v1alpha1"
    std::string kind;
    std::string name;
    std::string namespace_name; // empty: cluster-scoped
    std::string uid;

    static ObjectReference of(const nlohmann::json& object); // from a read object
};

enum class EventType { normal, warning };

// Who reports: controller ("shimkeeper.containerd.x-k8s.io/agent") and which copy of it
// ("shimkeeper-node-a"). Both are required by events.k8s.io/v1.
struct EventSource {
    std::string controller;
    std::string instance;
};

// The namespace an Event about `regarding` lives in.
std::string event_namespace_for(const ObjectReference& regarding);

// The Event object. reason: UpperCamelCase ("InstallFailed"); action: what was done
// ("Install"); note: a human sentence, cut to the API's 1 kB limit.
nlohmann::json build_event(const EventSource& source, const ObjectReference& regarding,
                           EventType type, const std::string& reason, const std::string& action,
                           const std::string& note, std::chrono::system_clock::time_point now);

class EventRecorder {
public:
    EventRecorder(ApiClient& client, EventSource source)
        : m_client(client), m_source(std::move(source)) {}

    util::Expected<nlohmann::json> emit(const ObjectReference& regarding, EventType type,
                                        const std::string& reason, const std::string& action,
                                        const std::string& note);

private:
    ApiClient& m_client;
    EventSource m_source;
};

} // namespace shimkeeper::kubeapi
