#include "shimkeeper/systemd/sdbus_properties.hpp"

#include "shimkeeper/systemd/sdbus_error.hpp"
#include "shimkeeper/systemd/sdbus_handles.hpp"

#include <cstdlib>
#include <memory>

namespace shimkeeper::systemd {

namespace {

struct FreeDeleter {
    void operator()(char* text) const { std::free(text); }
};

std::string describe(const PropertyReader& reader, const char* name) {
    return std::string("reading ") + name + " of " + reader.unit;
}

template <typename T>
util::Expected<T> trivial(const PropertyReader& reader, const char* interface, const char* name,
                          char type) {
    BusError error;
    T value{};
    const int rc =
        sd_bus_get_property_trivial(reader.bus, k_systemd_destination, reader.path.c_str(),
                                    interface, name, error.get(), type, &value);
    if (rc < 0) {
        return std::unexpected(bus_error(describe(reader, name), rc, error));
    }
    return value;
}

} // namespace

util::Expected<std::string> PropertyReader::string(const char* interface, const char* name) const {
    BusError error;
    char* raw = nullptr;
    const int rc = sd_bus_get_property_string(bus, k_systemd_destination, path.c_str(), interface,
                                              name, error.get(), &raw);
    std::unique_ptr<char, FreeDeleter> owned(raw);
    if (rc < 0) {
        return std::unexpected(bus_error(describe(*this, name), rc, error));
    }
    return std::string(owned ? owned.get() : "");
}

util::Expected<std::uint64_t> PropertyReader::u64(const char* interface, const char* name) const {
    return trivial<std::uint64_t>(*this, interface, name, 't');
}

util::Expected<std::uint32_t> PropertyReader::u32(const char* interface, const char* name) const {
    return trivial<std::uint32_t>(*this, interface, name, 'u');
}

util::Expected<std::int32_t> PropertyReader::i32(const char* interface, const char* name) const {
    return trivial<std::int32_t>(*this, interface, name, 'i');
}

util::Expected<std::string> PropertyReader::id128(const char* interface, const char* name) const {
    BusError error;
    sd_bus_message* raw = nullptr;
    int rc = sd_bus_get_property(bus, k_systemd_destination, path.c_str(), interface, name,
                                 error.get(), &raw, "ay");
    MessagePtr reply(raw);
    if (rc < 0) {
        return std::unexpected(bus_error(describe(*this, name), rc, error));
    }
    const void* bytes = nullptr;
    std::size_t size = 0;
    rc = sd_bus_message_read_array(reply.get(), 'y', &bytes, &size);
    if (rc < 0) {
        return std::unexpected(bus_error(describe(*this, name), rc));
    }
    std::string hex;
    const auto* data = static_cast<const unsigned char*>(bytes);
    for (std::size_t i = 0; i < size; ++i) {
        constexpr const char* k_digits = "0123456789abcdef";
        hex += k_digits[data[i] >> 4];
        hex += k_digits[data[i] & 0xf];
    }
    return hex;
}

util::Expected<std::string> load_unit_path(sd_bus* bus, const std::string& unit) {
    BusError error;
    sd_bus_message* raw = nullptr;
    int rc = sd_bus_call_method(bus, k_systemd_destination, k_systemd_path, k_manager_interface,
                                "LoadUnit", error.get(), &raw, "s", unit.c_str());
    MessagePtr reply(raw);
    if (rc < 0) {
        return std::unexpected(bus_error("LoadUnit(" + unit + ")", rc, error));
    }
    const char* path = nullptr;
    rc = sd_bus_message_read(reply.get(), "o", &path);
    if (rc < 0) {
        return std::unexpected(bus_error("reading the reply of LoadUnit(" + unit + ")", rc));
    }
    const PropertyReader reader{bus, path, unit};
    const auto load_state = TRY(reader.string(k_unit_interface, "LoadState"));
    if (load_state == "not-found") {
        return util::fail(util::ErrorCode::not_found,
                          "systemd has no unit " + unit +
                              " (LoadState=not-found): check [containerd] unit in the agent "
                              "config, or `systemctl list-unit-files`");
    }
    return std::string(path);
}

} // namespace shimkeeper::systemd
