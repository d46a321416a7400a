// The F16C block conversions of cpu/f16c.hpp. Compiled with -mf16c on x86 (CMake): this
// file must hold nothing but these two functions and must not include library headers
// whose inline functions would then be emitted as AVX code (see f16c.hpp). Elsewhere
// (no F16C), scalar loops over the same rules; usable() is then false anyway.
#include "cpu/f16c.hpp"

#if defined(__F16C__)
#include <immintrin.h>

namespace odnn::cpu::f16c {

namespace {

// Eight halves to floats; NaNs as core::half_to_float gives them (sign | 0x7fc00000).
inline __m256 cvt8_to_float(__m128i h) {
    const __m256 f = _mm256_cvtph_ps(h);
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    const __m256 canon = _mm256_or_ps(_mm256_and_ps(f, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN))),
                                      _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
    // A bitwise select, not _mm256_blendv_ps: GCC turns that blend of a compare's mask
    // into a branch a lane here (this file is built for AVX without AVX2).
    return _mm256_or_ps(_mm256_andnot_ps(nan, f), _mm256_and_ps(nan, canon));
}

// Eight floats to halves, rounded to nearest even; NaNs as core::float_to_half gives them
// (0x7e00, the sign dropped).
inline __m128i cvt8_to_half(__m256 f) {
    const __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extractf128_si256(nan, 1));
    return _mm_or_si128(_mm_andnot_si128(nan16, h), _mm_and_si128(nan16, _mm_set1_epi16(0x7e00)));
}

}  // namespace

void to_float(const uint16_t* h, float* f, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(f + i, cvt8_to_float(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
    if (i < n) {
        uint16_t th[8] = {};
        float tf[8];
        for (int64_t k = i; k < n; ++k) th[k - i] = h[k];
        _mm256_storeu_ps(tf, cvt8_to_float(_mm_loadu_si128(reinterpret_cast<const __m128i*>(th))));
        for (int64_t k = i; k < n; ++k) f[k] = tf[k - i];
    }
}

void to_half(const float* f, uint16_t* h, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), cvt8_to_half(_mm256_loadu_ps(f + i)));
    if (i < n) {
        float tf[8] = {};
        uint16_t th[8];
        for (int64_t k = i; k < n; ++k) tf[k - i] = f[k];
        _mm_storeu_si128(reinterpret_cast<__m128i*>(th), cvt8_to_half(_mm256_loadu_ps(tf)));
        for (int64_t k = i; k < n; ++k) h[k] = th[k - i];
    }
}

}  // namespace odnn::cpu::f16c

#else  // no F16C in this build: the scalar rules

#include "core/scalar_convert.hpp"

namespace odnn::cpu::f16c {

void to_float(const uint16_t* h, float* f, int64_t n) {
    for (int64_t i = 0; i < n; ++i) f[i] = core::half_to_float(h[i]);
}

void to_half(const float* f, uint16_t* h, int64_t n) {
    for (int64_t i = 0; i < n; ++i) h[i] = core::float_to_half(f[i]);
}

}  // namespace odnn::cpu::f16c

#endif
