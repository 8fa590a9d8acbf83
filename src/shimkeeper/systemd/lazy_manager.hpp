// A SystemdManager that connects to the bus on first use and once more when the connection
// has dropped. A converged apply then never touches D-Bus, and a bus that went away between
// the restart and the rollback does not leave containerd without its rollback restart.
#pragma once

#include "shimkeeper/spec/agent_settings.hpp"
#include "shimkeeper/systemd/manager.hpp"

#include <memory>

namespace shimkeeper::systemd {

class LazySystemdManager final : public SystemdManager {
public:
    explicit LazySystemdManager(spec::BusKind bus) : m_bus(bus) {}

    util::Expected<JobResult> restart_unit(const std::string& unit,
                                           std::chrono::milliseconds timeout) override;
    util::Expected<UnitState> unit_state(const std::string& unit) override;
    util::Expected<void> reset_failed(const std::string& unit) override;

private:
    // Runs `call` on a connected manager; on a dropped connection reconnects and runs it again.
    template <typename Call>
    auto with_bus(Call call) -> decltype(call(std::declval<SystemdManager&>()));

    spec::BusKind m_bus;
    std::unique_ptr<SystemdManager> m_manager;
};

} // namespace shimkeeper::systemd
