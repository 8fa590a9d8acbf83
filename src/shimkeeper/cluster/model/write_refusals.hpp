// What the API server refuses of a node's writes to its own Node, as the coordinator learns it
// (pure). A node whose Node patch is refused (RBAC, NodeRestriction or a webhook: HTTP 403; a
// policy: 422 or 403) cannot say so on its Node, so it says it in an Event about the Shim (reason
// NodeWriteRefused, action naming the request), again at most every k_refusal_repeat while the
// refusal lasts, and once the same request is accepted again an Event with reason
// NodeWriteAccepted. The node is the Event's reportingInstance ("shimkeeper-<node>"), which
// deploy/'s policy holds node identities to. A refusal the coordinator has not heard about for
// k_refusal_kept is forgotten (a node that stopped, or whose acceptance Event was lost).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace shimkeeper::cluster::model {

inline constexpr const char* k_agent_controller = "shimkeeper.containerd.x-k8s.io/agent";
inline constexpr const char* k_write_refused = "NodeWriteRefused";
inline constexpr const char* k_write_accepted = "NodeWriteAccepted";
inline constexpr std::chrono::seconds k_refusal_repeat{30};
inline constexpr std::chrono::minutes k_refusal_kept{10};

// The reportingInstance of a node's agent.
std::string agent_instance(const std::string& node);

// A node's Event about a Shim's write, read from the core/v1 view of an Event.
struct WriteEvent {
    std::string shim;
    std::string node;
    std::string action;   // the request: "HoldSlot", "ReportState"
    bool refused = false; // NodeWriteRefused; else NodeWriteAccepted
    std::string message;
    std::string time; // eventTime, RFC 3339 in UTC with microseconds: ordered as text
};
std::optional<WriteEvent> write_event_of(const nlohmann::json& event);

class WriteRefusals {
public:
    using Clock = std::chrono::steady_clock;

    // An Event seen by the watch (added or modified; a deleted Event changes nothing). One made
    // before `oldest` (the MicroTime k_refusal_kept ago) is too old to count.
    void apply(const WriteEvent& event, Clock::time_point now, const std::string& oldest);
    // What a list of the Events says, the later Event of a request counting.
    void replace_with(const std::vector<nlohmann::json>& events, Clock::time_point now,
                      const std::string& oldest);

    // node -> what it is refused, joined, for every node with a refusal in effect for this Shim.
    std::map<std::string, std::string> for_shim(const std::string& shim,
                                                Clock::time_point now) const;
    // When the next refusal in effect is forgotten: a pass then says so.
    std::optional<Clock::time_point> next_expiry(Clock::time_point now) const;

private:
    struct Seen {
        std::string message;
        Clock::time_point at;
    };
    std::map<std::tuple<std::string, std::string, std::string>, Seen>
        m_refused; // shim, node, action
};

} // namespace shimkeeper::cluster::model
