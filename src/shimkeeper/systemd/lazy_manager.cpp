#include "shimkeeper/systemd/lazy_manager.hpp"

#include <cerrno>

namespace shimkeeper::systemd {

bool is_connection_lost(int err) {
    return err == ECONNRESET || err == ENOTCONN || err == EPIPE || err == ECONNREFUSED;
}

template <typename Call>
auto LazySystemdManager::with_bus(Call call) -> decltype(call(std::declval<SystemdManager&>())) {
    for (int attempt = 0;; ++attempt) {
        if (!m_manager) {
            auto connected = connect_systemd(m_bus);
            if (!connected) {
                return std::unexpected(connected.error());
            }
            m_manager = std::move(*connected);
        }
        auto result = call(*m_manager);
        if (result || attempt > 0 || !is_connection_lost(result.error().sys_errno())) {
            return result;
        }
        m_manager.reset(); // the bus went away: one fresh connection, then give up
    }
}

util::Expected<JobResult> LazySystemdManager::restart_unit(const std::string& unit,
                                                           std::chrono::milliseconds timeout) {
    return with_bus([&](SystemdManager& m) { return m.restart_unit(unit, timeout); });
}

util::Expected<UnitState> LazySystemdManager::unit_state(const std::string& unit) {
    return with_bus([&](SystemdManager& m) { return m.unit_state(unit); });
}

util::Expected<void> LazySystemdManager::reset_failed(const std::string& unit) {
    return with_bus([&](SystemdManager& m) { return m.reset_failed(unit); });
}

} // namespace shimkeeper::systemd
