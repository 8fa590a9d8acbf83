// Reading systemd's D-Bus properties through sd-bus, one typed helper per D-Bus signature.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <string>
#include <systemd/sd-bus.h>

namespace shimkeeper::systemd {

inline constexpr const char* k_systemd_destination = "org.freedesktop.systemd1";
inline constexpr const char* k_systemd_path = "/org/freedesktop/systemd1";
inline constexpr const char* k_manager_interface = "org.freedesktop.systemd1.Manager";
inline constexpr const char* k_unit_interface = "org.freedesktop.systemd1.Unit";
inline constexpr const char* k_service_interface = "org.freedesktop.systemd1.Service";

// One property of the object at `path` (a unit's object path).
struct PropertyReader {
    sd_bus* bus;
    std::string path;
    std::string unit; // for messages

    util::Expected<std::string> string(const char* interface, const char* name) const; // "s"
    util::Expected<std::uint64_t> u64(const char* interface, const char* name) const;  // "t"
    util::Expected<std::uint32_t> u32(const char* interface, const char* name) const;  // "u"
    util::Expected<std::int32_t> i32(const char* interface, const char* name) const;   // "i"
    // An "ay" holding a 128-bit id, as 32 lowercase hex digits ("" when systemd sends none).
    util::Expected<std::string> id128(const char* interface, const char* name) const;
};

// The object path of a unit, loading its definition if systemd has not yet. A unit that has no
// file (LoadState "not-found") is ErrorCode::not_found.
util::Expected<std::string> load_unit_path(sd_bus* bus, const std::string& unit);

} // namespace shimkeeper::systemd
