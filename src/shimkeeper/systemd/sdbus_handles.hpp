// Owners for sd-bus's C handles, and an sd_bus_error that frees itself.
#pragma once

#include <memory>
#include <systemd/sd-bus.h>

namespace shimkeeper::systemd {

struct BusDeleter {
    // Flushes queued messages, closes the connection, drops our reference.
    void operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }
};
struct MessageDeleter {
    void operator()(sd_bus_message* message) const { sd_bus_message_unref(message); }
};
struct SlotDeleter {
    // Unreferencing a match slot also removes the match from the bus.
    void operator()(sd_bus_slot* slot) const { sd_bus_slot_unref(slot); }
};

using BusPtr = std::unique_ptr<sd_bus, BusDeleter>;
using MessagePtr = std::unique_ptr<sd_bus_message, MessageDeleter>;
using SlotPtr = std::unique_ptr<sd_bus_slot, SlotDeleter>;

// sd_bus_error on the stack, freed on scope exit. (SD_BUS_ERROR_NULL is a C compound literal.)
class BusError {
public:
    BusError() = default;
    BusError(const BusError&) = delete;
    BusError& operator=(const BusError&) = delete;
    ~BusError() { sd_bus_error_free(&m_error); }

    sd_bus_error* get() { return &m_error; }
    bool is_set() const { return sd_bus_error_is_set(&m_error) != 0; }
    const char* name() const { return m_error.name != nullptr ? m_error.name : ""; }
    const char* message() const { return m_error.message != nullptr ? m_error.message : ""; }

private:
    sd_bus_error m_error{nullptr, nullptr, 0};
};

} // namespace shimkeeper::systemd
