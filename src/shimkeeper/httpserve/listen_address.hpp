// The address a small HTTP endpoint listens on, as given on the command line: IPV4:PORT,
// [IPV6]:PORT, or :PORT for every IPv4 address (0.0.0.0, what a Pod's probes reach). A numeric
// address only: a name would depend on resolution at start.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>

namespace shimkeeper::httpserve {

struct ListenAddress {
    std::string host; // numeric, without brackets
    int port = 0;     // 1-65535
};

// `option` names the flag in messages ("--listen").
util::Expected<ListenAddress> parse_listen_address(std::string_view text, std::string_view option);

} // namespace shimkeeper::httpserve
