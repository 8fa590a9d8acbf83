#include "shimkeeper/cluster/model/slot_board.hpp"

#include "shimkeeper/kubeapi/object_meta.hpp"

#include <algorithm>

namespace shimkeeper::cluster::model {

using nlohmann::json;

SlotBoard SlotBoard::from_list(const std::vector<json>& leases,
                               std::chrono::steady_clock::time_point now) {
    SlotBoard board;
    for (const json& lease : leases) {
        board.put(lease, now);
    }
    board.m_synced = true;
    return board;
}

std::vector<SlotSeen>::iterator SlotBoard::find(const std::string& name) {
    return std::lower_bound(
        m_slots.begin(), m_slots.end(), name,
        [](const SlotSeen& slot, const std::string& key) { return slot.lease.name < key; });
}

void SlotBoard::put(const json& lease, std::chrono::steady_clock::time_point seen) {
    SlotLease parsed = slot_lease_of(lease);
    if (parsed.shim.empty()) {
        return;
    }
    auto found = find(parsed.name);
    const bool known = found != m_slots.end() && found->lease.name == parsed.name;
    if (known && found->lease.resource_version == parsed.resource_version) {
        return; // the same version again (a re-list): its clock keeps running
    }
    const std::string shim = parsed.shim;
    const bool released = parsed.holder.empty();
    if (known) {
        *found = SlotSeen{std::move(parsed), seen};
    } else {
        m_slots.insert(found, SlotSeen{std::move(parsed), seen});
    }
    if (m_listener) {
        m_listener(shim, released);
    }
}

void SlotBoard::apply(const kubeapi::WatchEvent& event, std::chrono::steady_clock::time_point now) {
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced: {
        std::set<std::string> present;
        for (const json& lease : event.items) {
            present.insert(kubeapi::name_of(lease));
            ++m_events[kubeapi::name_of(lease)];
            put(lease, now);
        }
        for (auto it = m_slots.begin(); it != m_slots.end();) {
            if (present.contains(it->lease.name)) {
                ++it;
                continue;
            }
            const std::string shim = it->lease.shim;
            ++m_events[it->lease.name];
            it = m_slots.erase(it);
            if (m_listener) {
                m_listener(shim, true);
            }
        }
        m_synced = true;
        break;
    }
    case kubeapi::WatchEvent::Kind::added:
    case kubeapi::WatchEvent::Kind::modified:
        ++m_events[kubeapi::name_of(event.object)];
        put(event.object, now);
        break;
    case kubeapi::WatchEvent::Kind::deleted: {
        const std::string name = kubeapi::name_of(event.object);
        ++m_events[name];
        auto found = find(name);
        if (found != m_slots.end() && found->lease.name == name) {
            const std::string shim = found->lease.shim;
            m_slots.erase(found);
            if (m_listener) {
                m_listener(shim, true);
            }
        }
        break;
    }
    }
}

} // namespace shimkeeper::cluster::model
