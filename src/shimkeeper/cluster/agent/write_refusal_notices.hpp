// The node's side of model/write_refusals.hpp: when the API server refuses a write this node needs
// on its own Node (HTTP 401 or 403: RBAC, NodeRestriction, a webhook; 422 or 403: a policy), a
// Warning Event about each Shim the write was for tells that Shim's operator, since the Node
// cannot; again every k_refusal_repeat while it lasts, and a Normal Event once the same request is
// accepted again. One record per process: the writers (the reconcile's report, the slot renewal
// thread, a take) are short-lived objects on two threads, and what they told must outlive them.
#pragma once

#include "shimkeeper/kubeapi/api_client.hpp"
#include "shimkeeper/kubeapi/event_recorder.hpp"
#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shimkeeper::cluster::agent {

// A Shim as an Event's subject, when only its name (and maybe uid) is at hand.
kubeapi::ObjectReference shim_reference(const std::string& name, const std::string& uid);

class WriteRefusalNotices {
public:
    static WriteRefusalNotices& of_this_process();

    // After a write of `action` ("HoldSlot", "ReportState") for these Shims to Node `node`:
    // `refused` is its error when it failed (anything but a refusal is not told). Returns why an
    // Event could not be sent, for the caller's log.
    std::optional<util::Error> after_write(kubeapi::ApiClient& client, const std::string& node,
                                           const std::vector<kubeapi::ObjectReference>& shims,
                                           const std::string& action, const util::Error* refused);

private:
    using Clock = std::chrono::steady_clock;
    std::mutex m_mutex;
    std::map<std::pair<std::string, std::string>, Clock::time_point> m_told; // shim, action
};

} // namespace shimkeeper::cluster::agent
