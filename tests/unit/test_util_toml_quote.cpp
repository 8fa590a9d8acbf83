// The one TOML quoter shimkeeper writes with.
#include "shimkeeper/util/toml_quote.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

namespace shimkeeper::util {
namespace {
namespace util_toml_quote {

TEST(UtilTomlQuote, EscapesEveryCharacterTomlReservesInStringsAndKeys) {
    EXPECT_EQ(toml_quoted("a\"b\\c"), R"("a\"b\\c")");
    EXPECT_EQ(toml_quoted(std::string("\n\t\r\b\f\x01\x7f\0", 8)),
              R"("\n\t\r\b\f\u0001\u007F\u0000")");
    EXPECT_EQ(toml_quoted("caf\xc3\xa9"), "\"caf\xc3\xa9\""); // UTF-8 stays as it is
    EXPECT_EQ(toml_key("Systemd_Cgroup-2"), "Systemd_Cgroup-2");
    EXPECT_EQ(toml_key(""), R"("")");
    EXPECT_EQ(toml_key("a.b"), R"("a.b")");
    EXPECT_EQ(toml_key("c\n"), R"("c\n")");
}

// What is written reads back as the same string and key through toml++, control characters and
// all (the containerd config engine and the shims.d writer both rely on it).
TEST(UtilTomlQuote, WhatIsWrittenReadsBackTheSame) {
    std::string every_byte;
    for (int byte = 1; byte < 0x80; ++byte) {
        every_byte += static_cast<char>(byte);
    }
    every_byte += "caf\xc3\xa9";
    const toml::table table =
        toml::parse(toml_key(every_byte) + " = " + toml_quoted(every_byte) + "\n");
    ASSERT_EQ(table.size(), 1U);
    EXPECT_EQ(table.begin()->first.str(), every_byte);
    EXPECT_EQ(table.begin()->second.value<std::string>(), every_byte);
}

} // namespace util_toml_quote
} // namespace
} // namespace shimkeeper::util
