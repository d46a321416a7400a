// Layout predicates shared by the CPU fast paths: which strided views are one dense
// block of memory, whether two views walk their elements in the same order, and whether
// two operands' bytes overlap.
#pragma once

#include <cstdint>
#include <utility>

namespace odnn::cpu {

// The strides tile the elements exactly (no gaps, no overlap), in any order of dims.
inline bool dense_strides(int nb, const int64_t* dims, const int64_t* strides) {
    constexpr int kMax = 16;
    if (nb < 1 || nb > kMax) return false;
    int order[kMax];
    int k = 0;
    for (int d = 0; d < nb; ++d) {
        if (dims[d] < 1) return false;
        if (dims[d] > 1) order[k++] = d;
    }
    for (int i = 1; i < k; ++i)  // by stride (a handful of dims)
        for (int j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
    int64_t expect = 1;
    for (int i = 0; i < k; ++i) {
        if (strides[order[i]] != expect) return false;
        expect *= dims[order[i]];
    }
    return true;
}

// Same extents, and the same strides wherever the extent exceeds 1 (extent-1 dims
// address nothing).
inline bool same_strides(int nb_a, const int64_t* da, const int64_t* sa, int nb_b, const int64_t* db,
                         const int64_t* sb) {
    if (nb_a != nb_b) return false;
    for (int d = 0; d < nb_a; ++d)
        if (da[d] != db[d] || (da[d] > 1 && sa[d] != sb[d])) return false;
    return true;
}

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (false when
// either pointer is null): an output written over an input other than element by element
// in place is left to the reference, which copies its inputs first.
inline bool spans_overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
    if (!a || !b) return false;
    const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
    return pa < pb + static_cast<uintptr_t>(b_bytes) && pb < pa + static_cast<uintptr_t>(a_bytes);
}

}  // namespace odnn::cpu
