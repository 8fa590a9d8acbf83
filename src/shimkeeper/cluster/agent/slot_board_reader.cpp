#include "shimkeeper/cluster/agent/slot_board_reader.hpp"

#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <chrono>

namespace shimkeeper::cluster::agent {

util::Expected<model::SlotBoard> read_slot_board(kubeapi::Client& client, std::string_view ns) {
    auto leases = client.list(kubeapi::leases_resource(), ns);
    if (!leases) {
        return std::unexpected(std::move(leases.error()).with_context("reading the rollout slots"));
    }
    return model::SlotBoard::from_list(leases->items, std::chrono::steady_clock::now());
}

util::Expected<model::SlotBoard> read_own_grants(kubeapi::Client& client, std::string_view ns,
                                                 const std::string& node) {
    kubeapi::ListOptions options;
    options.label_selector =
        std::string(model::k_slot_holder_label) + "=" + model::holder_label_value(node);
    auto leases = client.list(kubeapi::leases_resource(), ns, options);
    if (!leases) {
        return std::unexpected(
            std::move(leases.error()).with_context("reading the rollout slots granted to " + node));
    }
    return model::SlotBoard::from_list(leases->items, std::chrono::steady_clock::now());
}

} // namespace shimkeeper::cluster::agent
