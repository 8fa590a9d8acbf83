#include "shimkeeper/cluster/model/write_refusals.hpp"

#include <algorithm>

namespace shimkeeper::cluster::model {

using nlohmann::json;

namespace {

constexpr std::string_view k_instance_prefix = "shimkeeper-";

} // namespace

std::string agent_instance(const std::string& node) {
    return std::string(k_instance_prefix) + node;
}

std::optional<WriteEvent> write_event_of(const json& event) {
    if (!event.is_object()) {
        return std::nullopt;
    }
    const json about = event.value("involvedObject", json::object());
    const std::string reason = event.value("reason", "");
    const std::string instance = event.value("reportingInstance", "");
    if (event.value("reportingComponent", "") != k_agent_controller ||
        (reason != k_write_refused && reason != k_write_accepted) ||
        about.value("kind", "") != "Shim" || about.value("name", "").empty() ||
        !instance.starts_with(k_instance_prefix) || instance.size() == k_instance_prefix.size()) {
        return std::nullopt;
    }
    WriteEvent out{about.value("name", ""),    instance.substr(k_instance_prefix.size()),
                   event.value("action", ""),  reason == k_write_refused,
                   event.value("message", ""), event.value("eventTime", "")};
    // The note starts with the node for `kubectl describe`; a status names the node already.
    if (const std::string lead = "node " + out.node + ": "; out.message.starts_with(lead)) {
        out.message.erase(0, lead.size());
    }
    return out;
}

void WriteRefusals::apply(const WriteEvent& event, Clock::time_point now,
                          const std::string& oldest) {
    if (event.time < oldest) {
        return;
    }
    auto key = std::make_tuple(event.shim, event.node, event.action);
    if (event.refused) {
        m_refused[key] = {event.message, now};
    } else {
        m_refused.erase(key);
    }
}

void WriteRefusals::replace_with(const std::vector<json>& events, Clock::time_point now,
                                 const std::string& oldest) {
    std::vector<WriteEvent> seen;
    for (const auto& object : events) {
        if (auto event = write_event_of(object)) {
            seen.push_back(std::move(*event));
        }
    }
    std::ranges::stable_sort(seen, {}, &WriteEvent::time);
    m_refused.clear();
    for (const auto& event : seen) {
        apply(event, now, oldest);
    }
}

std::map<std::string, std::string> WriteRefusals::for_shim(const std::string& shim,
                                                           Clock::time_point now) const {
    std::map<std::string, std::string> out;
    for (auto it = m_refused.lower_bound({shim, "", ""});
         it != m_refused.end() && std::get<0>(it->first) == shim; ++it) {
        if (now - it->second.at >= k_refusal_kept) {
            continue;
        }
        std::string& said = out[std::get<1>(it->first)];
        said += (said.empty() ? "" : "; ") + it->second.message;
    }
    return out;
}

std::optional<WriteRefusals::Clock::time_point>
WriteRefusals::next_expiry(Clock::time_point now) const {
    std::optional<Clock::time_point> next;
    for (const auto& [key, seen] : m_refused) {
        const auto until = seen.at + k_refusal_kept;
        if (until > now && (!next || until < *next)) {
            next = until;
        }
    }
    return next;
}

} // namespace shimkeeper::cluster::model
