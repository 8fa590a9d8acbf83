#include "shimkeeper/cluster/model/grant_book.hpp"

#include "shimkeeper/cluster/model/slot_timing.hpp"

#include <algorithm>

namespace shimkeeper::cluster::model {

namespace {

std::uint64_t events_of(const SlotEventCounts& events, const std::string& name) {
    const auto found = events.find(name);
    return found == events.end() ? 0 : found->second;
}

std::string lease_name_of(const SlotGrant& grant) {
    return slot_lease_name(grant.target.shim, grant.index);
}

} // namespace

void GrantBook::note_slots_seen(const std::vector<SlotSeen>& slots) {
    for (const SlotSeen& slot : slots) {
        if (slot.lease.failed.empty() && !slot.lease.holder.empty()) {
            m_grants_seen.emplace(slot.lease.grant, slot.lease.holder);
        }
    }
}

void GrantBook::settle(const std::vector<SlotSeen>& live, const SlotEventCounts& events,
                       const std::map<std::string, SlotRequests>& requests, Clock::time_point now) {
    std::erase_if(m_pending, [&](const Pending& made) {
        return now - made.at > slot_timing::free_after ||
               events_of(events, lease_name_of(made.grant)) > made.events;
    });
    std::set<std::string> not_seen_yet;
    for (const Pending& made : m_pending) {
        not_seen_yet.insert(lease_name_of(made.grant));
    }
    for (const std::string& name : gone_grants(m_granted, live, not_seen_yet)) {
        m_served.push_back(m_granted.at(name));
        m_granted.erase(name);
    }
    std::erase_if(m_served, [&](const Declined& served) {
        const auto node = requests.find(served.node);
        if (node == requests.end()) {
            return true;
        }
        const auto request = node->second.find(served.shim);
        return request == node->second.end() || request->second != served.request;
    });
}

void GrantBook::record_grant(const SlotGrant& grant, const SlotRequest& request,
                             const SlotEventCounts& events, Clock::time_point now) {
    const std::string name = lease_name_of(grant);
    m_pending.push_back({grant, now, events_of(events, name)});
    m_granted[name] = {grant.node, grant.target.shim, request};
}

std::vector<SlotGrant> GrantBook::pending_grants() const {
    std::vector<SlotGrant> out;
    for (const Pending& made : m_pending) {
        out.push_back(made.grant);
    }
    return out;
}

std::optional<GrantBook::Clock::time_point> GrantBook::next_pending_expiry() const {
    std::optional<Clock::time_point> out;
    for (const Pending& made : m_pending) {
        const auto until = made.at + slot_timing::free_after;
        out = out ? std::min(*out, until) : until;
    }
    return out;
}

} // namespace shimkeeper::cluster::model
