// A Kubernetes quantity read as an amount: every spelling of one amount is equal (the API server
// gives back its own spelling), and what is not a quantity says why.
#include "shimkeeper/cluster/model/quantity.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::cluster::model {
namespace {
namespace cluster_quantity {

Quantity amount(std::string_view text) {
    auto quantity = Quantity::parse(text);
    EXPECT_TRUE(quantity) << text << ": " << quantity.error();
    return quantity.value_or(*Quantity::parse("0"));
}

TEST(ClusterQuantity, SpellingsOfOneAmountAreEqual) {
    EXPECT_EQ(amount("0.5"), amount("500m"));
    EXPECT_EQ(amount("1024Mi"), amount("1Gi"));
    EXPECT_EQ(amount("1.5Gi"), amount("1536Mi"));
    EXPECT_EQ(amount("1e3"), amount("1k"));
    EXPECT_EQ(amount("1E-3"), amount("1m"));
    EXPECT_EQ(amount("+250m"), amount(".25"));
    EXPECT_EQ(amount("1000000000n"), amount("1"));
    EXPECT_EQ(amount("0"), amount("0Gi"));
    EXPECT_EQ(amount("1E"), amount("1000P"));
    EXPECT_EQ(amount("160Mi"), amount("167772160"));
}

TEST(ClusterQuantity, DifferentAmountsDiffer) {
    EXPECT_FALSE(amount("1G") == amount("1Gi"));
    EXPECT_FALSE(amount("250m") == amount("251m"));
    EXPECT_FALSE(amount("-1") == amount("1"));
}

TEST(ClusterQuantity, FinerThanANanoUnitRoundsUpAsTheApiServerDoes) {
    EXPECT_EQ(amount("0.0000000001"), amount("1n"));
    EXPECT_EQ(amount("1.5n"), amount("2n"));
}

TEST(ClusterQuantity, WholeUnitsOnlyWithoutAFraction) {
    EXPECT_TRUE(amount("2k").whole());
    EXPECT_EQ(*amount("2k").whole_units(), 2000U);
    EXPECT_EQ(*amount("2Mi").whole_units(), 2U * 1024 * 1024);
    EXPECT_FALSE(amount("1500m").whole());
    EXPECT_FALSE(amount("1500m").whole_units());
    EXPECT_TRUE(amount("-3").negative());
}

TEST(ClusterQuantity, WhatIsNotAQuantitySaysWhy) {
    EXPECT_EQ(Quantity::parse("lots").error(),
              "is \"lots\", not a quantity: it must start with a number, such as 250m, 0.5, "
              "1Gi or 1e3");
    EXPECT_EQ(Quantity::parse("1GB").error(),
              "is \"1GB\", not a quantity: the suffix \"GB\" is none of Ki, Mi, Gi, Ti, Pi, Ei, "
              "n, u, m, k, M, G, T, P, E or an exponent such as e3");
    EXPECT_EQ(Quantity::parse("1e").error(),
              "is \"1e\", not a quantity: the suffix \"e\" is none of Ki, Mi, Gi, Ti, Pi, Ei, "
              "n, u, m, k, M, G, T, P, E or an exponent such as e3");
    EXPECT_EQ(Quantity::parse("1e1.5").error(),
              "is \"1e1.5\", not a quantity: an exponent is a whole number");
    EXPECT_FALSE(Quantity::parse(""));
    EXPECT_FALSE(Quantity::parse("1..5"));
    EXPECT_FALSE(Quantity::parse(" 1"));
    EXPECT_FALSE(Quantity::parse(std::string(40, '9')));
}

} // namespace cluster_quantity
} // namespace
} // namespace shimkeeper::cluster::model
