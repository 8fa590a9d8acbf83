// gRPC framing and trailer parsing, byte for byte: what the libcurl transport relies on.
#include "shimkeeper/health/grpc_frame.hpp"

#include <gtest/gtest.h>

namespace {
namespace health_grpc_frame {

using namespace shimkeeper::health;
using namespace std::string_literals;

TEST(GrpcFrame, PrefixesFlagAndBigEndianLength) {
    EXPECT_EQ(frame_message(""), "\0\0\0\0\0"s);
    EXPECT_EQ(frame_message("\x08\x01"), "\0\0\0\0\x02\x08\x01"s);
    const std::string big(0x010203, 'x');
    const std::string framed = frame_message(big);
    ASSERT_EQ(framed.size(), big.size() + 5);
    EXPECT_EQ(framed.substr(0, 5), "\0\0\x01\x02\x03"s);
}

TEST(GrpcFrame, UnframeRoundTrips) {
    for (const std::string& message : {""s,
                                       "\x0a\x0a"
                                       "1.6.20~ds1"s,
                                       std::string(70000, '\xff')}) {
        const auto unframed = unframe_unary(frame_message(message));
        ASSERT_TRUE(unframed) << unframed.error().message();
        EXPECT_EQ(*unframed, message);
    }
}

TEST(GrpcFrame, UnframeRejectsShortTruncatedCompressedAndTrailingBytes) {
    const auto too_short = unframe_unary("\0\0\0"s);
    ASSERT_FALSE(too_short);
    EXPECT_NE(too_short.error().message().find("less than one 5-byte message header"),
              std::string::npos);

    const auto truncated = unframe_unary("\0\0\0\0\x09"
                                         "abc"s);
    ASSERT_FALSE(truncated);
    EXPECT_NE(truncated.error().message().find("header says 9 bytes, body holds 3"),
              std::string::npos);

    const auto compressed = unframe_unary("\x01\0\0\0\x01"
                                          "a"s);
    ASSERT_FALSE(compressed);
    EXPECT_NE(compressed.error().message().find("compressed"), std::string::npos);

    const auto two_messages = unframe_unary(frame_message("a") + frame_message("b"));
    ASSERT_FALSE(two_messages);
    EXPECT_NE(two_messages.error().message().find("6 bytes after its one message"),
              std::string::npos);
}

TEST(GrpcStatusTrailers, FoundAmongHeadersAndTrailers) {
    const std::vector<std::string> lines = {
        "HTTP/2 200 \r\n",
        "content-type: application/grpc\r\n",
        "\r\n",
        "grpc-status: 12\r\n",
        "grpc-message: unknown service runtime.v1.RuntimeService\r\n",
        "\r\n"};
    const auto status = find_grpc_status(lines);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->code, 12);
    EXPECT_EQ(status->message, "unknown service runtime.v1.RuntimeService");
    EXPECT_EQ(grpc_code_name(status->code), "UNIMPLEMENTED");
}

TEST(GrpcStatusTrailers, NamesAreCaseInsensitiveAndMessageIsPercentDecoded) {
    const auto status =
        find_grpc_status({"Grpc-Message: a%20b%3A%zz%\r\n", "GRPC-STATUS:  0 \r\n"});
    ASSERT_TRUE(status);
    EXPECT_EQ(status->code, 0);
    EXPECT_EQ(status->message, "a b:%zz%");
}

TEST(GrpcStatusTrailers, MissingStatusIsReportedAsAbsent) {
    EXPECT_FALSE(find_grpc_status({"HTTP/2 200\r\n", "content-type: application/grpc\r\n"}));
}

TEST(GrpcStatusTrailers, GarbageStatusCountsAsUnknown) {
    const auto status = find_grpc_status({"grpc-status: ok\r\n"});
    ASSERT_TRUE(status);
    EXPECT_EQ(status->code, 2);
    EXPECT_EQ(grpc_code_name(status->code), "UNKNOWN");
    EXPECT_EQ(grpc_code_name(99), "code 99");
}

} // namespace health_grpc_frame
} // namespace
