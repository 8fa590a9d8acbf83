#include "shimkeeper/cluster/agent/slot_board_reader.hpp"

#include "shimkeeper/cluster/model/slot_grant.hpp"
#include "shimkeeper/kubeapi/resource.hpp"

#include <chrono>

namespace shimkeeper::cluster::agent {

namespace {

// One list of the namespace's Leases (narrowed by `options`), all stamped as seen now.
util::Expected<model::SlotBoard> list_slot_board(kubeapi::Client& client, std::string_view ns,
                                                 const kubeapi::ListOptions& options,
                                                 const std::string& what) {
    auto leases = client.list(kubeapi::leases_resource(), ns, options);
    if (!leases) {
        return std::unexpected(std::move(leases.error()).with_context(what));
    }
    return model::SlotBoard::from_list(leases->items, std::chrono::steady_clock::now());
}

} // namespace

util::Expected<model::SlotBoard> read_slot_board(kubeapi::Client& client, std::string_view ns) {
    return list_slot_board(client, ns, {}, "reading the rollout slots");
}

util::Expected<model::SlotBoard> read_own_grants(kubeapi::Client& client, std::string_view ns,
                                                 const std::string& node) {
    kubeapi::ListOptions options;
    options.label_selector =
        std::string(model::k_slot_holder_label) + "=" + model::holder_label_value(node);
    return list_slot_board(client, ns, options, "reading the rollout slots granted to " + node);
}

} // namespace shimkeeper::cluster::agent
