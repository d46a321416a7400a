// Small helpers shared by the optimised CPU convolutions (gemm_conv.cpp, direct_conv.cpp):
// typed storage of the floating-point data types, and which algorithm ids each serves.
// Not used by the reference (src/cpu/ref/ref_conv.cpp), which must stay independent.
//
// Algorithm ids -> implementations (ids are cuDNN's, stable):
//   forward   IMPLICIT_GEMM (0)                      cpu_direct_conv (no workspace)
//             IMPLICIT_PRECOMP_GEMM (1), GEMM (2),   cpu_direct_conv for depthwise / tiny
//             FFT (4), FFT_TILING (5), WINOGRAD (6), channel groups, else cpu_gemm_conv
//             WINOGRAD_NONFUSED (7)                  (im2col + BLAS); odnn has no FFT or
//                                                    Winograd kernels: those ids run the GEMM
//             DIRECT (3)                             not supported (as in cuDNN)
//   bwd data  ALGO_0 (0)                             cpu_direct_conv
//             ALGO_1 (1), FFT (2), FFT_TILING (3),   as forward IMPLICIT_PRECOMP_GEMM
//             WINOGRAD (4), WINOGRAD_NONFUSED (5)
//   bwd filt  ALGO_0 (0)                             cpu_direct_conv
//             ALGO_1 (1), FFT (2), ALGO_3 (3),       as forward IMPLICIT_PRECOMP_GEMM
//             WINOGRAD_NONFUSED (5), FFT_TILING (6)
//             WINOGRAD (4)                           not supported (as in cuDNN)
// 8-bit integer forward and NCHW_VECT_C data run on cpu_direct_conv (no vector layouts)
// or the reference. Every path is deterministic and accumulates in fp32 (fp64 for DOUBLE).
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/conv_problem.hpp"
#include "core/elem_access.hpp"
#include "core/scalar_convert.hpp"

namespace odnn::cpu {

struct HalfBits {
    uint16_t bits;
};
struct Bf16Bits {
    uint16_t bits;
};

// Half -> float through a table (65536 entries, built once).
const float* half_table();

inline float to_float(float v) { return v; }
inline double to_float(double v) { return v; }
inline float to_float(HalfBits v) { return half_table()[v.bits]; }
inline float to_float(Bf16Bits v) { return core::bf16_to_float(v.bits); }
inline float to_float(int8_t v) { return static_cast<float>(v); }
inline float to_float(uint8_t v) { return static_cast<float>(v); }

// Calls f(S{}) with the storage type of a floating-point data type.
template <class F>
void with_storage(cudnnDataType_t t, F&& f) {
    switch (t) {
        case CUDNN_DATA_DOUBLE: f(double{}); break;
        case CUDNN_DATA_HALF: f(HalfBits{}); break;
        case CUDNN_DATA_BFLOAT16: f(Bf16Bits{}); break;
        default: f(float{}); break;
    }
}

// Threads. A convolution call splits into independent tasks run by OpenMP threads, each
// with its own slice ("slot") of the workspace for its im2col / col2im, calling BLAS
// single-threaded: copies and GEMMs then scale together, and no BLAS worker threads spin
// beside ours. The slot count is fixed when the library loads (OpenMP's thread count
// then), so a workspace query and the call it precedes always agree, and work split by
// slots (partial sums) is split the same way on every run: results are deterministic.
int conv_slots();
// Threads to use now: the slot count, or fewer if OpenMP allows fewer (nested calls: 1).
int conv_threads();

// While alive: a pthreads OpenBLAS runs single-threaded (its thread count is process-wide;
// the first of concurrent users saves it, the last restores it). OpenMP and sequential
// builds need nothing: an OpenMP OpenBLAS is single-threaded inside our parallel regions.
class BlasSerial {
public:
    BlasSerial();
    ~BlasSerial();
    BlasSerial(const BlasSerial&) = delete;
    BlasSerial& operator=(const BlasSerial&) = delete;

private:
    bool active_ = false;
};

// The end of a parallel_tasks region: each thread, once it finds no task left, waits
// (spinning briefly, then yielding its core at every check) until all have.
class TaskTail {
public:
    explicit TaskTail(int threads) : busy_(threads) {}
    void arrive();

private:
    std::atomic<int> busy_;
};

// Runs f(task, slot) for task in [0, count) on up to conv_threads() threads, tasks handed
// out one at a time; slot < conv_slots() identifies the thread's workspace slice. f must
// not throw. A thread that finds no task left waits in TaskTail, yielding its core,
// instead of spinning in the region's closing barrier: on a machine shared with other
// work, a spinning thread takes the time slices the busy ones need.
template <class F>
void parallel_tasks(int64_t count, F&& f) {
    const int nt = static_cast<int>(std::min<int64_t>(conv_threads(), count));
    if (nt <= 1) {
        for (int64_t t = 0; t < count; ++t) f(t, 0);
        return;
    }
    std::atomic<int64_t> next{0};
    TaskTail tail(nt);
#pragma omp parallel num_threads(nt)
    {
        const int slot = omp_get_thread_num();
        for (int64_t t = next.fetch_add(1, std::memory_order_relaxed); t < count;
             t = next.fetch_add(1, std::memory_order_relaxed))
            f(t, slot);
        tail.arrive();
    }
}

// Ids handled by the zero-workspace direct implementation regardless of shape.
inline bool algo_is_direct(const core::ConvProblem& p) { return p.algo == 0; }

// Shapes where per-group GEMMs would be tiny: the direct loops serve every id then.
inline bool prefers_direct(const core::ConvProblem& p) {
    return p.cg() == 1 || (p.cg() <= 4 && p.kg() <= 4);
}

// The fused epilogue after v = alpha * acc: + alpha2 * z + bias, then the activation.
inline double apply_epilogue(const core::ConvProblem& p, double v, int64_t n, int64_t c, int64_t d, int64_t h,
                             int64_t w) {
    const core::ConvEpilogue& e = p.epi;
    if (e.alpha2 != 0.0) v += e.alpha2 * core::load_elem(e.z, e.z_t.offset(n, c, d, h, w), e.z_t.dtype);
    v += core::load_elem(e.bias, e.bias_t.offset(0, c, 0, 0, 0), e.bias_t.dtype);
    if (e.relu && !(v > 0.0) && !(e.propagate_nan && std::isnan(v))) v = 0.0;
    return v;
}

// Stores alpha * acc + beta * old (old read only when beta != 0), or the fused epilogue,
// into element (n, c, d, h, w) of output tensor t.
inline void blend_store(const core::ConvProblem& p, void* base, const core::ConvTensor& t, double acc, int64_t n,
                        int64_t c, int64_t d, int64_t h, int64_t w) {
    const int64_t off = t.offset(n, c, d, h, w);
    double v = p.alpha * acc;
    if (p.epi.enabled) {
        v = apply_epilogue(p, v, n, c, d, h, w);
    } else if (p.beta != 0.0) {
        v += p.beta * core::load_elem(base, off, t.dtype);
    }
    core::store_elem(base, off, t.dtype, v);
}

// Typed stores of the floating-point storage types.
template <class S>
inline void put(S* o, double v);
template <>
inline void put(float* o, double v) { *o = static_cast<float>(v); }
template <>
inline void put(double* o, double v) { *o = v; }
template <>
inline void put(HalfBits* o, double v) { o->bits = core::float_to_half(static_cast<float>(v)); }
template <>
inline void put(Bf16Bits* o, double v) { o->bits = core::float_to_bf16(static_cast<float>(v)); }

// alpha * acc (+ beta * old, read only when beta != 0) in the compute type T, for `count`
// outputs `stride` elements apart.
template <class S, class T>
inline void store_run(S* o, int64_t stride, const T* acc, int64_t count, T alpha, T beta) {
    if constexpr (std::is_same_v<S, T>) {
        if (stride == 1) {  // contiguous, same type: plain loops that vectorize
            if (beta != T(0)) {
                for (int64_t i = 0; i < count; ++i) o[i] = alpha * acc[i] + beta * o[i];
            } else if (alpha == T(1)) {
                std::memcpy(o, acc, static_cast<size_t>(count) * sizeof(T));
            } else {
                for (int64_t i = 0; i < count; ++i) o[i] = alpha * acc[i];
            }
            return;
        }
    }
    if (beta != T(0)) {
        for (int64_t i = 0; i < count; ++i)
            put(o + i * stride, static_cast<double>(alpha * acc[i] + beta * static_cast<T>(to_float(o[i * stride]))));
    } else {
        for (int64_t i = 0; i < count; ++i) put(o + i * stride, static_cast<double>(alpha * acc[i]));
    }
}

}  // namespace odnn::cpu
