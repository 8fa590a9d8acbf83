// --listen's ADDRESS:PORT: the accepted shapes, and each refusal naming the flag and the value.
#include "shimkeeper/httpserve/listen_address.hpp"

#include <gtest/gtest.h>

namespace {
namespace httpserve_listen_address {

using shimkeeper::httpserve::parse_listen_address;

TEST(ListenAddress, Ipv4Ipv6AndEveryAddress) {
    auto v4 = parse_listen_address("127.0.0.1:8080", "--listen");
    ASSERT_TRUE(v4) << v4.error().message();
    EXPECT_EQ(v4->host, "127.0.0.1");
    EXPECT_EQ(v4->port, 8080);
    auto v6 = parse_listen_address("[::1]:9090", "--listen");
    ASSERT_TRUE(v6) << v6.error().message();
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->port, 9090);
    auto any = parse_listen_address(":8080", "--listen");
    ASSERT_TRUE(any) << any.error().message();
    EXPECT_EQ(any->host, "0.0.0.0");
}

TEST(ListenAddress, RefusalsNameTheFlagTheValueAndTheProblem) {
    const std::pair<const char*, const char*> cases[] = {
        {"8080", "no port"},
        {"127.0.0.1:", "the port is not a number from 1 to 65535"},
        {"127.0.0.1:0", "the port is not a number from 1 to 65535"},
        {"127.0.0.1:65536", "the port is not a number from 1 to 65535"},
        {"127.0.0.1:http", "the port is not a number from 1 to 65535"},
        {"localhost:8080", "\"localhost\" is not an IPv4 address"},
        {"::1:8080", "is not an IPv4 address (an IPv6 one goes in brackets)"},
        {"[::1:8080", "an IPv6 address goes in brackets"},
        {"[127.0.0.1]:8080", "\"127.0.0.1\" is not an IPv6 address"},
    };
    for (const auto& [text, says] : cases) {
        SCOPED_TRACE(text);
        auto parsed = parse_listen_address(text, "--listen");
        ASSERT_FALSE(parsed) << "accepted";
        const std::string message = parsed.error().message();
        EXPECT_TRUE(message.starts_with("--listen \"" + std::string(text) + "\": ")) << message;
        EXPECT_NE(message.find(says), std::string::npos) << message;
        EXPECT_EQ(parsed.error().code(), shimkeeper::util::ErrorCode::invalid_input);
    }
}

} // namespace httpserve_listen_address
} // namespace
