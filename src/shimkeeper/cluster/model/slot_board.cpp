#include "shimkeeper/cluster/model/slot_board.hpp"

#include "shimkeeper/kubeapi/object_meta.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <sstream>

namespace shimkeeper::cluster::model {

namespace {

using nlohmann::json;

// A MicroTime ("2026-11-24T10:00:00.123456Z") as a time point; nullopt when it is none.
std::optional<std::chrono::system_clock::time_point> parse_micro(const std::string& text) {
    std::tm tm{};
    std::istringstream in(text);
    in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
    if (in.fail()) {
        return std::nullopt;
    }
    auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
    if (in.peek() == '.') {
        in.get();
        std::string digits;
        while (std::isdigit(in.peek())) {
            digits += static_cast<char>(in.get());
        }
        digits = (digits + "000000").substr(0, 6);
        when += std::chrono::microseconds(std::stol(digits));
    }
    return when;
}

} // namespace

SlotBoard SlotBoard::from_list(const std::vector<json>& leases,
                               std::chrono::system_clock::time_point now) {
    SlotBoard board;
    const auto steady_now = std::chrono::steady_clock::now();
    for (const json& lease : leases) {
        const auto renewed =
            parse_micro(lease.value(json::json_pointer("/spec/renewTime"), std::string()));
        const auto age =
            renewed && *renewed < now ? now - *renewed : std::chrono::system_clock::duration(0);
        board.put(lease, steady_now -
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(age));
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

void SlotBoard::apply(const kubeapi::WatchEvent& event) {
    const auto now = std::chrono::steady_clock::now();
    switch (event.kind) {
    case kubeapi::WatchEvent::Kind::synced: {
        std::set<std::string> present;
        for (const json& lease : event.items) {
            present.insert(kubeapi::name_of(lease));
            put(lease, now);
        }
        for (auto it = m_slots.begin(); it != m_slots.end();) {
            if (present.contains(it->lease.name)) {
                ++it;
                continue;
            }
            const std::string shim = it->lease.shim;
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
        put(event.object, now);
        break;
    case kubeapi::WatchEvent::Kind::deleted: {
        const std::string name = kubeapi::name_of(event.object);
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

util::Expected<SlotBoard> read_slot_board(kubeapi::Client& client, std::string_view ns) {
    auto leases = client.list(kubeapi::leases_resource(), ns);
    if (!leases) {
        return std::unexpected(std::move(leases.error()).with_context("reading the rollout slots"));
    }
    return SlotBoard::from_list(leases->items, std::chrono::system_clock::now());
}

} // namespace shimkeeper::cluster::model
