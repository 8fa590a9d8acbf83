// The writes behind rollout slots (slot_lease.hpp decides): take a slot (create, or take an
// expired/released one over at the resourceVersion seen: the API server lets one writer win),
// renew the slots held while a transaction runs (a thread of its own, since the transaction
// blocks the daemon's loop for as long as a download or a health check takes), release a slot
// after success (delete at the version held) and mark one failed (it then stays, and halts the
// rollout of that generation).
#pragma once

#include "shimkeeper/cluster/model/slot_lease.hpp"
#include "shimkeeper/kubeapi/client.hpp"
#include "shimkeeper/util/log.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace shimkeeper::cluster::agent {

struct HeldSlot {
    model::RolloutTarget target;
    nlohmann::json lease; // the version this node wrote last
};

class SlotKeeper {
public:
    SlotKeeper(kubeapi::Client& client, std::string ns, std::string me,
               std::chrono::seconds duration)
        : m_client(client), m_ns(std::move(ns)), m_me(std::move(me)), m_duration(duration) {}

    // nullopt: another node won the slot first (AlreadyExists, or a 409 on the takeover).
    util::Expected<std::optional<HeldSlot>> take(const model::RolloutTarget& target,
                                                 const model::SlotDecision& decision);
    // Deletes the slot at the version held; gone already is fine; a slot another node took over
    // in the meantime (it expired) is left to it.
    util::Expected<void> release(const HeldSlot& held);
    // Marks the slot failed with `reason`, at whatever version it has now, while it is ours.
    util::Expected<void> fail(const HeldSlot& held, const std::string& reason);
    // One renewal (renewTime now); updates held.lease.
    util::Expected<void> renew(HeldSlot& held);

    std::chrono::seconds duration() const { return m_duration; }

private:
    kubeapi::Client& m_client;
    std::string m_ns;
    std::string m_me;
    std::chrono::seconds m_duration;
};

// Renews the given slots every duration/3 on a thread with its own connection, from
// construction to stop() (or destruction). What it renewed is handed back by stop().
class SlotRenewal {
public:
    SlotRenewal(kubeapi::KubeConfig config, std::string ns, std::string me,
                std::chrono::seconds duration, std::vector<HeldSlot> held, util::Log log);
    ~SlotRenewal();
    SlotRenewal(const SlotRenewal&) = delete;
    SlotRenewal& operator=(const SlotRenewal&) = delete;

    std::vector<HeldSlot> stop();

private:
    void loop();

    kubeapi::Client m_client;
    SlotKeeper m_keeper;
    util::Log m_log;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::vector<HeldSlot> m_held;
    std::thread m_thread;
};

} // namespace shimkeeper::cluster::agent
