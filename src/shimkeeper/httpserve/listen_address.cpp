#include "shimkeeper/httpserve/listen_address.hpp"

#include <arpa/inet.h>
#include <charconv>

namespace shimkeeper::httpserve {

util::Expected<ListenAddress> parse_listen_address(std::string_view text, std::string_view option) {
    const auto bad = [&](const std::string& why) {
        return util::fail(util::ErrorCode::invalid_input, std::string(option) + " \"" +
                                                              std::string(text) + "\": " + why +
                                                              " (give ADDRESS:PORT, e.g. "
                                                              "0.0.0.0:8080, [::1]:8080 or :8080)");
    };
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
        return bad("no port");
    }
    std::string host(text.substr(0, colon));
    const std::string_view port = text.substr(colon + 1);
    if (host.starts_with('[') != host.ends_with(']') ||
        (host.starts_with('[') && host.size() < 3)) {
        return bad("an IPv6 address goes in brackets, [ADDRESS]");
    }
    const bool bracketed = host.starts_with('[');
    if (bracketed) {
        host = host.substr(1, host.size() - 2);
    }
    unsigned number = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || number == 0 ||
        number > 65535) {
        return bad("the port is not a number from 1 to 65535");
    }
    if (host.empty()) {
        host = "0.0.0.0";
    }
    unsigned char address[16];
    const bool v4 = !bracketed && ::inet_pton(AF_INET, host.c_str(), address) == 1;
    const bool v6 = bracketed && ::inet_pton(AF_INET6, host.c_str(), address) == 1;
    if (!v4 && !v6) {
        return bad(bracketed ? "\"" + host + "\" is not an IPv6 address"
                             : "\"" + host +
                                   "\" is not an IPv4 address (an IPv6 one goes in "
                                   "brackets)");
    }
    return ListenAddress{host, static_cast<int>(number)};
}

} // namespace shimkeeper::httpserve
