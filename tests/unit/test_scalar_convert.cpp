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

// half_to_float / float_to_half take shortcuts; HalfFormat is the general encoder they
// must agree with bit for bit: every half, and floats at every rounding boundary.
TEST(ScalarConvert, HalfShortcutsMatchTheGeneralFormat) {
    for (uint32_t code = 0; code < 65536; ++code)
        ASSERT_EQ(float_bits(half_to_float(static_cast<uint16_t>(code))),
                  float_bits(HalfFormat::decode(code)))
            << code;
    auto check = [](uint32_t bits) {
        ASSERT_EQ(float_to_half(bits_float(bits)), HalfFormat::encode(bits_float(bits))) << std::hex << bits;
    };
    // Low bits just below, at and above each halfway point of normal halves (13 dropped
    // bits) and of subnormal ones (14 to 24), over every sign, exponent and high mantissa.
    for (uint32_t hi = 0; hi < (1u << 20); ++hi) {
        for (uint32_t low : {0x000u, 0x001u, 0x7ffu, 0x800u, 0x801u, 0xfffu}) check((hi << 12) | low);
    }
    for (int e = 101; e <= 113; ++e) {  // floats whose half is subnormal or the smallest normal
        const int drop = 13 + (113 - e);
        for (uint32_t m = 0; m < 4096; ++m) {
            const uint32_t man = (m << (drop > 12 ? drop - 12 : 0)) & 0x7fffffu;
            const uint32_t half = drop < 24 ? 1u << (drop - 1) : 0u;
            for (uint32_t d : {man, man | half, (man | half) - 1, (man | half) + 1}) {
                check((static_cast<uint32_t>(e) << 23) | (d & 0x7fffffu));
                check(0x80000000u | (static_cast<uint32_t>(e) << 23) | (d & 0x7fffffu));
            }
        }
    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 2000000; ++i) {  // and a random sample of every pattern
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        check(static_cast<uint32_t>(s));
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
