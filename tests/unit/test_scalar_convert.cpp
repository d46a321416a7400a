// Scalar conversions against independent references: the compiler's _Float16 for
// half, and exhaustive round trips of every 8- and 16-bit code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/scalar_convert.hpp"

namespace {

using namespace odnn::core;

uint16_t bits_of(_Float16 h) {
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
}

TEST(ScalarConvert, HalfRoundTripsEveryCode) {
    for (uint32_t code = 0; code < 65536; ++code) {
        const float f = half_to_float(static_cast<uint16_t>(code));
        _Float16 ref;
        const uint16_t c16 = static_cast<uint16_t>(code);
        std::memcpy(&ref, &c16, 2);
        if (std::isnan(static_cast<float>(ref))) {
            ASSERT_TRUE(std::isnan(f)) << code;
            continue;
        }
        ASSERT_EQ(f, static_cast<float>(ref)) << code;
        ASSERT_EQ(float_to_half(f), code) << code;
    }
}

TEST(ScalarConvert, FloatToHalfMatchesCompilerOnAStrideOfFloats) {
    // Every 2^k-th float bit pattern covers all exponents, subnormals, ties and overflow.
    for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093) {
        const float f = bits_float(static_cast<uint32_t>(bits));
        const _Float16 ref = static_cast<_Float16>(f);
        if (std::isnan(f)) {
            ASSERT_TRUE(std::isnan(half_to_float(float_to_half(f))));
            continue;
        }
        ASSERT_EQ(float_to_half(f), bits_of(ref)) << std::hexfloat << f;
    }
}

TEST(ScalarConvert, Bf16RoundsToNearestEven) {
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(float_to_bf16(bits_float(0x3f808000u)), 0x3f80);  // tie, even stays
    EXPECT_EQ(float_to_bf16(bits_float(0x3f818000u)), 0x3f82);  // tie, odd rounds up
    EXPECT_EQ(float_to_bf16(bits_float(0x3f808001u)), 0x3f81);
    EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
    EXPECT_EQ(bf16_to_float(float_to_bf16(INFINITY)), INFINITY);
    for (uint32_t code = 0; code < 65536; ++code) {
        const float f = bf16_to_float(static_cast<uint16_t>(code));
        if (!std::isnan(f)) ASSERT_EQ(float_to_bf16(f), code);
    }
}

TEST(ScalarConvert, Fp8RoundTripsAndLimits) {
    for (uint32_t code = 0; code < 256; ++code) {
        const float a = Fp8E4M3::decode(code);
        if (!std::isnan(a)) ASSERT_EQ(Fp8E4M3::encode(a), code) << code;
        const float b = Fp8E5M2::decode(code);
        if (!std::isnan(b)) ASSERT_EQ(Fp8E5M2::encode(b), code) << code;
    }
    EXPECT_EQ(Fp8E4M3::decode(0x7e), 448.0f);      // largest E4M3 value
    EXPECT_TRUE(std::isnan(Fp8E4M3::decode(0x7f)));
    EXPECT_TRUE(std::isnan(Fp8E4M3::decode(Fp8E4M3::encode(1000.0f))));  // no infinity in E4M3
    EXPECT_EQ(Fp8E5M2::decode(0x7b), 57344.0f);    // largest E5M2 value
    EXPECT_EQ(Fp8E5M2::decode(Fp8E5M2::encode(1e6f)), INFINITY);
    EXPECT_EQ(Fp8E4M3::decode(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
}

}  // namespace
