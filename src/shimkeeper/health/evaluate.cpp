#include "shimkeeper/health/evaluate.hpp"

#include <algorithm>

namespace shimkeeper::health {

namespace {

const RuntimeHandlerInfo* find_handler(const CriStatus& status, const std::string& name) {
    const auto it = std::ranges::find(status.handlers, name, &RuntimeHandlerInfo::name);
    return it == status.handlers.end() ? nullptr : &*it;
}

HealthReport unhealthy(std::string reason) {
    return {false, std::move(reason)};
}

} // namespace

std::string effective_binary(const RuntimeHandlerInfo& handler) {
    if (handler.runtime_type.starts_with('/')) {
        return handler.runtime_type;
    }
    return handler.runtime_path;
}

HealthReport evaluate(const HealthExpectation& expectation,
                      const util::Expected<std::string>& version,
                      const util::Expected<CriStatus>& status) {
    if (!version) {
        return unhealthy("containerd does not answer Version: " + version.error().message());
    }
    if (!status) {
        return unhealthy("containerd " + *version +
                         " does not answer CRI Status: " + status.error().message());
    }
    if (!status->runtime_ready) {
        return unhealthy("containerd " + *version +
                         " reports the CRI condition RuntimeReady false");
    }
    for (const auto& [type, was_true] : expectation.conditions_before) {
        if (!was_true) {
            continue;
        }
        const auto now = status->conditions.find(type);
        if (now == status->conditions.end() || !now->second) {
            return unhealthy("the CRI condition " + type +
                             " was true before the change and is not now");
        }
    }
    for (const auto& [name, binary] : expectation.handlers) {
        const RuntimeHandlerInfo* handler = find_handler(*status, name);
        if (handler == nullptr) {
            return unhealthy("runtime handler \"" + name +
                             "\" is not registered in containerd's CRI config");
        }
        const std::string actual = effective_binary(*handler);
        if (actual != binary) {
            return unhealthy("runtime handler \"" + name + "\" runs " +
                             (actual.empty() ? "runtime_type " + handler->runtime_type : actual) +
                             ", expected " + binary);
        }
    }
    for (const std::string& name : expectation.must_keep) {
        if (find_handler(*status, name) == nullptr) {
            return unhealthy("runtime handler \"" + name +
                             "\" was registered before the change and is gone");
        }
    }
    return {true, "containerd " + *version + " healthy: RuntimeReady, " +
                      std::to_string(status->handlers.size()) + " runtime handlers"};
}

} // namespace shimkeeper::health
