// The slot Leases read with one list through the API client, for the commands without the slot
// watch (`apply`, `status`): a SlotBoard (model/slot_board.hpp) whose Leases are all stamped as
// seen at the list.
#pragma once

#include "shimkeeper/cluster/model/slot_board.hpp"
#include "shimkeeper/kubeapi/client.hpp"

#include <string>
#include <string_view>

namespace shimkeeper::cluster::agent {

// Lists every Lease of the namespace `ns` (the slots of every Shim, and others the board leaves
// out): `status`'s.
util::Expected<model::SlotBoard> read_slot_board(kubeapi::Client& client, std::string_view ns);
// Lists the slot Leases of `ns` granted to `node` (its holder label): `apply`'s.
util::Expected<model::SlotBoard> read_own_grants(kubeapi::Client& client, std::string_view ns,
                                                 const std::string& node);

} // namespace shimkeeper::cluster::agent
