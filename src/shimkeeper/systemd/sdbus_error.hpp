// The sd-bus edge: negative return codes and D-Bus errors become util::Error right here, with
// the D-Bus error name kept in the message (a user can search for it) and a hint what to do.
#pragma once

#include "shimkeeper/systemd/sdbus_handles.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>

namespace shimkeeper::systemd {

// `what` says what we asked for, e.g. "RestartUnit(containerd.service)". A D-Bus error name
// wins over rc; org.freedesktop.systemd1.NoSuchUnit maps to ErrorCode::not_found.
util::Error bus_error(const std::string& what, int rc, const BusError& error);

// For calls that report only a negative errno (sd_bus_open_*, sd_bus_wait, readers).
util::Error bus_error(const std::string& what, int rc);

} // namespace shimkeeper::systemd
