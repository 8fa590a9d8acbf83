#include "shimkeeper/reconcile/expectation.hpp"

namespace shimkeeper::reconcile {

health::HealthExpectation expectation_for(const store::Store& store,
                                          const std::vector<store::InstalledShim>& shims,
                                          const std::optional<health::CriStatus>& before,
                                          const std::set<std::string>& dropped) {
    health::HealthExpectation expectation;
    for (const auto& shim : shims) {
        expectation.handlers[shim.handler] = store.binary_node_path(shim.binary).string();
    }
    if (before) {
        for (const auto& handler : before->handlers) {
            if (!dropped.contains(handler.name) && !expectation.handlers.contains(handler.name)) {
                expectation.must_keep.push_back(handler.name);
            }
        }
        expectation.conditions_before = before->conditions;
    }
    return expectation;
}

} // namespace shimkeeper::reconcile
