// Dropout (cudnnDropoutForward / Backward): the counter-based generator both backends
// share, and the problem.
//
// The generator is Philox4x32-10 keyed by the 64-bit seed. The states buffer (layout
// in core/ops_desc.hpp, DropoutStates) holds the counter `offset`; a forward call over
// n elements uses the 128-bit blocks start = ceil(offset / 4) ... and element i (in the
// row-major order of x's dims) takes word i % 4 of block start + i / 4. Element i is
// kept when that word is >= threshold = floor(p * 2^32); kept elements are scaled by
// 1 / (1 - p) (computed in float). The call then sets offset = 4 * (start + ceil(n / 4)).
// So the mask depends only on (seed, offset, i): the same on every backend, bit for bit.
// The reserve space holds the mask, bit i of 32-bit word i / 32 (the remaining bits of
// the last word are 0); backward reads it: dx = dy * mask * 1 / (1 - p).
// p <= 0 (or NaN) keeps everything and needs no states; p >= 1 drops everything.
#pragma once

#include <cstdint>

#include "core/handle.hpp"
#include "core/impl_registry.hpp"
#include "core/ops_desc.hpp"
#include "core/scalar_convert.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

ODNN_HD void philox_mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
    const uint64_t p = static_cast<uint64_t>(a) * b;
    *hi = static_cast<uint32_t>(p >> 32);
    *lo = static_cast<uint32_t>(p);
}

// Philox4x32 with 10 rounds on L counters at once, in place: c[word][lane] holds counter
// word 0..3 of each lane and becomes its four random words; key (k0, k1). The lanes are
// independent chains (the CPU fast path draws 8 blocks a call: the core overlaps them).
template <int L>
ODNN_HD void philox4x32_10_lanes(uint32_t (&c)[4][L], uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        for (int l = 0; l < L; ++l) {
            uint32_t hi0, lo0, hi1, lo1;
            philox_mulhilo(0xD2511F53u, c[0][l], &hi0, &lo0);
            philox_mulhilo(0xCD9E8D57u, c[2][l], &hi1, &lo1);
            const uint32_t c1 = c[1][l], c3 = c[3][l];
            c[0][l] = hi1 ^ c1 ^ k0;
            c[1][l] = lo1;
            c[2][l] = hi0 ^ c3 ^ k1;
            c[3][l] = lo0;
        }
    }
}

// The counter of block `block`: its 64 bits and a fixed tag.
template <int L>
ODNN_HD void dropout_counter(uint64_t block, int l, uint32_t (&c)[4][L]) {
    c[0][l] = static_cast<uint32_t>(block);
    c[1][l] = static_cast<uint32_t>(block >> 32);
    c[2][l] = 0x6f646e6eu;
    c[3][l] = 0u;
}

// The four random words of block `block` for `seed`.
ODNN_HD void dropout_block(uint64_t seed, uint64_t block, uint32_t out[4]) {
    uint32_t c[4][1];
    dropout_counter<1>(block, 0, c);
    philox4x32_10_lanes<1>(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
    for (int w = 0; w < 4; ++w) out[w] = c[w][0];
}

// The words of blocks block0 .. block0 + L - 1 for `seed`: c[word][lane].
template <int L>
ODNN_HD void dropout_blocks(uint64_t seed, uint64_t block0, uint32_t (&c)[4][L]) {
    for (int l = 0; l < L; ++l) dropout_counter<L>(block0 + static_cast<uint64_t>(l), l, c);
    philox4x32_10_lanes<L>(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

ODNN_HD uint64_t dropout_first_block(uint64_t offset) { return (offset + 3) / 4; }

struct DropoutProblem {
    static constexpr const char* kOpName = "dropout";
    bool backward = false;
    TensorDesc x, y;  // forward: x -> y; backward: dy -> dx
    const void* x_data = nullptr;
    void* y_data = nullptr;
    void* states = nullptr;  // forward: read and advanced (NULL when p <= 0)
    uint32_t* reserve = nullptr;
    bool keep_all = false;
    bool drop_all = false;
    uint32_t threshold = 0;
    float scale = 1.0f;
};

// Builds and dispatches (the API layer fills x, y, the pointers and `backward`).
Status dropout(const Handle& h, const DropoutDesc& d, DropoutProblem& p, size_t reserve_bytes);

}  // namespace odnn::core
