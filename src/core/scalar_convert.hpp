// Scalar conversions between storage types and float/double, shared by the CPU
// backend and CUDA kernels (host-device functions). Rounding is to nearest even;
// NaN stays NaN.
#pragma once

#include <stdint.h>

#include "core/host_device.hpp"

namespace odnn::core {

ODNN_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
#endif
}

ODNN_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// A small float format: `ebits` exponent bits, `mbits` mantissa bits, IEEE-like
// bias; `ieee_specials` formats keep an all-ones exponent for inf/NaN (half,
// E5M2); otherwise (E4M3 "fn") only S.1111.111 is NaN and there is no infinity.
template <int ebits, int mbits, bool ieee_specials>
struct MiniFloat {
    static constexpr int kBias = (1 << (ebits - 1)) - 1;
    static constexpr uint32_t kExpMask = (1u << ebits) - 1;
    static constexpr uint32_t kManMask = (1u << mbits) - 1;
    static constexpr uint32_t kSign = 1u << (ebits + mbits);
    static constexpr uint32_t kNaN = ieee_specials ? ((kExpMask << mbits) | (1u << (mbits - 1))) : (kSign - 1);
    // Largest finite magnitude, encoded.
    static constexpr uint32_t kMaxFinite = ieee_specials ? (((kExpMask - 1) << mbits) | kManMask) : (kSign - 2);

    static ODNN_HD float decode(uint32_t v) {
        const bool neg = (v & kSign) != 0;
        const uint32_t e = (v >> mbits) & kExpMask;
        const uint32_t m = v & kManMask;
        float out;
        if (ieee_specials && e == kExpMask) {
            out = m ? bits_float(0x7fc00000u) : bits_float(0x7f800000u);
        } else if (!ieee_specials && e == kExpMask && m == kManMask) {
            out = bits_float(0x7fc00000u);
        } else if (e == 0) {
            out = static_cast<float>(m) * exp2i(1 - kBias - mbits);
        } else {
            out = (1.0f + static_cast<float>(m) / static_cast<float>(1u << mbits)) * exp2i(static_cast<int>(e) - kBias);
        }
        return neg ? -out : out;
    }

    static ODNN_HD uint32_t encode(float f) {
        const uint32_t x = float_bits(f);
        const uint32_t sign = (x >> 31) ? kSign : 0u;
        const uint32_t absx = x & 0x7fffffffu;
        if (absx > 0x7f800000u) return kNaN;
        if (absx == 0x7f800000u) return ieee_specials ? (sign | (kExpMask << mbits)) : kNaN;
        // Work on the float's own exponent / 24-bit significand.
        int e = static_cast<int>(absx >> 23) - 127;
        uint32_t sig = (absx & 0x7fffffu) | (absx >> 23 ? 0x800000u : 0u);
        if ((absx >> 23) == 0) e = -126;  // float subnormal
        if (sig == 0) return sign;
        // Target exponent, clamped to the subnormal range.
        int te = e < 1 - kBias ? 1 - kBias : e;
        // Bits of sig to drop so that mbits remain (plus the implicit one).
        const int shift = 23 - mbits + (te - e);
        uint32_t q;
        if (shift >= 32) {
            q = 0;  // far below half the smallest subnormal
        } else {
            q = sig >> shift;
            const uint32_t rem = sig & ((1u << shift) - 1u);
            const uint32_t halfway = 1u << (shift - 1);
            if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
        }
        // q is the significand in units of 2^(te - mbits); it may carry into the exponent.
        uint32_t enc;
        if (q >= (2u << mbits)) {  // carried past the implicit bit
            q >>= 1;
            ++te;
        }
        if (q < (1u << mbits)) {
            enc = q;  // subnormal (te == 1 - bias)
        } else {
            const int be = te + kBias;
            enc = (static_cast<uint32_t>(be) << mbits) | (q & kManMask);
        }
        if (enc > kMaxFinite) return ieee_specials ? (sign | (kExpMask << mbits)) : (sign | kNaN);
        return sign | enc;
    }

    static ODNN_HD float exp2i(int e) {
        // 2^e for the small range these formats need, exactly.
        return bits_float(static_cast<uint32_t>(e + 127) << 23);
    }
};

using HalfFormat = MiniFloat<5, 10, true>;
using Fp8E4M3 = MiniFloat<4, 3, false>;
using Fp8E5M2 = MiniFloat<5, 2, true>;

// Half <-> float with the bits of HalfFormat::decode / encode (the unit tests compare
// them), without its general-format loops and branches: the CPU's 16-bit loops spend
// most of their time here.
ODNN_HD float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;  // exponent and mantissa
    if (em < 0x0400u)                 // zero or subnormal: em * 2^-24, exact in float
        return bits_float(sign | float_bits(static_cast<float>(em) * 5.9604644775390625e-8f));
    uint32_t bits = (em << 13) + (uint32_t{127 - 15} << 23);  // normal: rebias the exponent
    if (em >= 0x7c00u) bits = em == 0x7c00u ? 0x7f800000u : 0x7fc00000u;  // inf, NaN (quiet)
    return bits_float(sign | bits);
}

ODNN_HD uint16_t float_to_half(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<uint16_t>(HalfFormat::kNaN);  // NaN: the sign is dropped
    if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);   // >= 65520 rounds to infinity
    if (a >= 0x38800000u) {  // a normal half (>= 2^-14): round the 13 dropped bits to nearest even
        const uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
        return static_cast<uint16_t>(sign | ((r - (uint32_t{127 - 15} << 23)) >> 13));
    }
    // Below 2^-14: adding 0.5 (whose ulp is 2^-24, the half's subnormal step) rounds to
    // nearest even in the float unit; the sum's mantissa is the half's, a carry into
    // 2^-14 included.
    return static_cast<uint16_t>(sign | (float_bits(bits_float(a) + 0.5f) - 0x3f000000u));
}

ODNN_HD float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

ODNN_HD uint16_t float_to_bf16(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

}  // namespace odnn::core
