// odnn selftest's comparator: what passes, what fails, and why.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "selftest_check.hpp"

namespace {

using odnn_tool::compare_values;
using odnn_tool::Tolerance;
using odnn_tool::tolerance_for;

TEST(SelftestCompare, EqualValuesPass) {
    const std::vector<double> v = {1, -2, 0.5, 3, 4, 5};
    const auto c = compare_values(v, v, Tolerance{0, 0});
    EXPECT_TRUE(c.pass) << c.why;
    EXPECT_EQ(c.max_abs_err, 0.0);
    EXPECT_EQ(c.mismatches, 0u);
}

TEST(SelftestCompare, ToleranceIsAbsPlusRelTimesReference) {
    const std::vector<double> ref = {100, 1, 2, 3, 4, 5};
    std::vector<double> got = ref;
    got[0] = 100.5;  // allowed: 0.1 + 0.005 * 100 = 0.6
    EXPECT_TRUE(compare_values(got, ref, Tolerance{0.1, 0.005}).pass);
    got[0] = 100.7;
    const auto c = compare_values(got, ref, Tolerance{0.1, 0.005});
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.mismatches, 1u);
    EXPECT_EQ(c.worst_index, 0u);
    EXPECT_NEAR(c.worst_ratio, 0.7 / 0.6, 1e-9);
    EXPECT_NE(c.why.find("1 of 6 values outside the tolerance"), std::string::npos) << c.why;
    EXPECT_NE(c.why.find("[0]: 100.7"), std::string::npos) << c.why;
}

TEST(SelftestCompare, UnwrittenElementFails) {
    const std::vector<double> ref = {1, 2, 3, 4, 5, 6};
    std::vector<double> got = ref;
    got[3] = NAN;  // the poison is still there
    const auto c = compare_values(got, ref, Tolerance{1e9, 1e9});
    EXPECT_FALSE(c.pass);
    EXPECT_NE(c.why.find("[3]: nan"), std::string::npos) << c.why;
    got[3] = INFINITY;
    EXPECT_FALSE(compare_values(got, ref, Tolerance{1e9, 1e9}).pass);
}

TEST(SelftestCompare, NanWhereTheReferenceHasNan) {
    const std::vector<double> ref = {1, NAN, 3, 4, 5, 6};
    std::vector<double> got = ref;
    EXPECT_TRUE(compare_values(got, ref, Tolerance{0, 0}).pass);
    got[1] = 2;  // a value where the reference says NaN
    EXPECT_FALSE(compare_values(got, ref, Tolerance{1e9, 1e9}).pass);
    const std::vector<double> inf = {INFINITY, -INFINITY, 1, 2, 3, 4};
    EXPECT_TRUE(compare_values(inf, inf, Tolerance{0, 0}).pass);
    std::vector<double> flipped = inf;
    flipped[1] = INFINITY;
    EXPECT_FALSE(compare_values(flipped, inf, Tolerance{1e9, 1e9}).pass);
}

TEST(SelftestCompare, SizeMismatchAndEmptyFail) {
    EXPECT_FALSE(compare_values({1, 2}, {1, 2, 3}, Tolerance{1, 1}).pass);
    EXPECT_FALSE(compare_values({}, {}, Tolerance{1, 1}).pass);
}

TEST(SelftestCompare, MostlyZeroReferenceIsVacuous) {
    std::vector<double> ref(100, 0.0);
    for (int i = 0; i < 5; ++i) ref[i] = 1;
    const auto c = compare_values(ref, ref, Tolerance{0, 0});
    EXPECT_FALSE(c.pass);
    EXPECT_NE(c.why.find("vacuous"), std::string::npos) << c.why;
    for (int i = 0; i < 20; ++i) ref[i] = 1;  // 80 % zeros: a ReLU-like output is fine
    EXPECT_TRUE(compare_values(ref, ref, Tolerance{0, 0}).pass);
    EXPECT_TRUE(compare_values({0, 0, 0}, {0, 0, 0}, Tolerance{0, 0}).pass);  // tiny outputs are not judged
}

TEST(SelftestTolerance, HalfOneUlpPassesFourUlpsFail) {
    const Tolerance t = tolerance_for(CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, 1);
    const double ulp = std::ldexp(1.0, -10);  // at 1.0
    const std::vector<double> ref = {1, 1, 1, 1, 1, 1};
    std::vector<double> got = ref;
    got[2] = 1 + ulp;
    EXPECT_TRUE(compare_values(got, ref, t).pass);
    got[2] = 1 + 4 * ulp;
    EXPECT_FALSE(compare_values(got, ref, t).pass);
}

TEST(SelftestTolerance, GrowsWithTheReductionLength) {
    const Tolerance a = tolerance_for(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 1);
    const Tolerance b = tolerance_for(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 1000, 1000);
    EXPECT_GT(b.rel, a.rel);
    EXPECT_GT(b.abs, a.abs);
    // still far tighter than a visible error
    EXPECT_LT(b.rel, 1e-3);
    // double is much tighter than float
    EXPECT_LT(tolerance_for(CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, 1000, 1000).rel, 1e-10);
}

TEST(SelftestTolerance, IntegersMayDifferByOneRounding) {
    const Tolerance t = tolerance_for(CUDNN_DATA_INT8, CUDNN_DATA_INT32, 27);
    const std::vector<double> ref = {10, -3, 7, 1, 2, 3};
    std::vector<double> got = ref;
    got[0] = 11;
    EXPECT_TRUE(compare_values(got, ref, t).pass);
    got[0] = 12;
    EXPECT_FALSE(compare_values(got, ref, t).pass);
}

}  // namespace
