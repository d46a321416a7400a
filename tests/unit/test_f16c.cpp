// The F16C block conversions (cpu/f16c.hpp) against the scalar rules they replace,
// bit for bit: every half code, every float bit pattern (a stride of them in debug
// builds), and lengths that leave tails.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/scalar_convert.hpp"
#include "cpu/f16c.hpp"

namespace {

using namespace odnn;

uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

TEST(F16c, EveryHalfCodeToFloat) {
    if (!cpu::f16c::usable()) GTEST_SKIP() << "no F16C on this CPU (or ODNN_CPU_F16C=off)";
    std::vector<uint16_t> h(65536);
    for (uint32_t c = 0; c < 65536; ++c) h[c] = static_cast<uint16_t>(c);
    std::vector<float> f(65536);
    cpu::f16c::to_float(h.data(), f.data(), 65536);
    for (uint32_t c = 0; c < 65536; ++c)
        ASSERT_EQ(bits_of(f[c]), bits_of(core::half_to_float(static_cast<uint16_t>(c)))) << "half 0x" << std::hex << c;
}

// Every float bit pattern in optimised builds (~6 s); in debug / sanitizer builds (where
// that took 200 s) every 61st, which still meets every exponent and sign and thousands of
// rounding ties.
#ifdef NDEBUG
constexpr uint64_t kFloatStride = 1;
#else
constexpr uint64_t kFloatStride = 61;
#endif

TEST(F16c, EveryFloatToHalf) {
    if (!cpu::f16c::usable()) GTEST_SKIP() << "no F16C on this CPU (or ODNN_CPU_F16C=off)";
    constexpr uint64_t kChunk = uint64_t{1} << 20;
    std::vector<float> f(kChunk);
    std::vector<uint16_t> h(kChunk);
    std::vector<uint32_t> pat(kChunk);
    uint64_t next = 0;
    while (next < (uint64_t{1} << 32)) {
        uint64_t m = 0;
        for (; m < kChunk && next < (uint64_t{1} << 32); ++m, next += kFloatStride) {
            pat[m] = static_cast<uint32_t>(next);
            f[m] = core::bits_float(pat[m]);
        }
        cpu::f16c::to_half(f.data(), h.data(), static_cast<int64_t>(m));
        for (uint64_t i = 0; i < m; ++i)
            if (h[i] != core::float_to_half(f[i]))
                FAIL() << "float 0x" << std::hex << pat[i] << ": 0x" << h[i] << " against 0x"
                       << core::float_to_half(f[i]);
    }
}

TEST(F16c, TailsWriteOnlyTheirElements) {
    if (!cpu::f16c::usable()) GTEST_SKIP() << "no F16C on this CPU (or ODNN_CPU_F16C=off)";
    for (int64_t n = 0; n <= 19; ++n) {
        std::vector<uint16_t> h(24, 0xabcd);
        std::vector<float> f(24, -7.0f);
        for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(i) * 0.37f - 2.0f;
        cpu::f16c::to_half(f.data(), h.data(), n);
        for (int64_t i = 0; i < 24; ++i)
            ASSERT_EQ(h[i], i < n ? core::float_to_half(f[i]) : uint16_t{0xabcd}) << "n " << n << " i " << i;
        std::vector<float> back(24, 123.0f);
        cpu::f16c::to_float(h.data(), back.data(), n);
        for (int64_t i = 0; i < 24; ++i)
            ASSERT_EQ(bits_of(back[i]), bits_of(i < n ? core::half_to_float(h[i]) : 123.0f)) << "n " << n << " i " << i;
    }
}

}  // namespace
