#include "shimkeeper/systemd/sdbus_error.hpp"

#include <cstring>
#include <string_view>

namespace shimkeeper::systemd {

namespace {

constexpr std::string_view k_no_such_unit = "org.freedesktop.systemd1.NoSuchUnit";
constexpr std::string_view k_access_denied = "org.freedesktop.DBus.Error.AccessDenied";

std::string hint_for(std::string_view name) {
    if (name == k_no_such_unit) {
        return " (check the unit name: [containerd] unit in the agent config, or "
               "`systemctl list-units`)";
    }
    if (name == k_access_denied ||
        name == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired") {
        return " (run as root, or set [systemd] bus = \"user\" for a user manager)";
    }
    return "";
}

} // namespace

util::Error bus_error(const std::string& what, int rc, const BusError& error) {
    if (!error.is_set()) {
        return bus_error(what, rc);
    }
    const std::string_view name = error.name();
    const auto code =
        name == k_no_such_unit ? util::ErrorCode::not_found : util::ErrorCode::external;
    std::string message = "systemd " + what + " failed: " + std::string(name) + ": " +
                          error.message() + hint_for(name);
    return util::Error(code, std::move(message), rc < 0 ? -rc : 0);
}

util::Error bus_error(const std::string& what, int rc) {
    const int err = rc < 0 ? -rc : rc;
    return util::Error::from_errno(util::ErrorCode::external, "systemd " + what + " failed", err);
}

} // namespace shimkeeper::systemd
