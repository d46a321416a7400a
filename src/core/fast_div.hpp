// Division by a run-time constant with a multiply and a shift (Granlund-Montgomery,
// round-up variant): index math in bandwidth-bound kernels, where a hardware-less
// 32-bit integer division per element would cost more than the memory access.
// Exact for every 32-bit dividend and divisor >= 1. Host and device.
#pragma once

#include <stdint.h>

#include "core/scalar_convert.hpp"

namespace odnn::core {

struct FastDiv {
    uint32_t d = 1;
    uint32_t mul = 1;
    uint32_t shift = 0;

    FastDiv() = default;
    explicit FastDiv(uint32_t divisor) : d(divisor ? divisor : 1) {
        shift = 0;
        while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;  // ceil(log2(d))
        mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
    }

    ODNN_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
        const uint32_t hi = __umulhi(n, mul);
#else
        const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * mul) >> 32);
#endif
        return static_cast<uint32_t>((static_cast<uint64_t>(hi) + n) >> shift);
    }
    ODNN_HD uint32_t mod(uint32_t n) const { return n - div(n) * d; }
};

}  // namespace odnn::core
