// CUDA cudnnSoftmaxForward / Backward. FAST is computed like ACCURATE (max-subtracted,
// as the CPU reference). Kernels by layout, when x / y (dy / dx) share one packed layout:
//
//   row, warp   the reduced elements are contiguous (CHANNEL with C innermost, e.g.
//               NHWC; INSTANCE with N outermost) and L <= 1024: one warp per softmax,
//               the values held in registers (16-byte loads when aligned).
//               fwd: read x, write y (2 n s); bwd: read y, dy, write dx (3 n s).
//   row, block  the same with L > 1024: one block per softmax, x re-read once from
//               memory (fwd 3 n s, bwd 5 n s).
//   column      the reduced elements are at a fixed stride with the positions between
//               them contiguous (CHANNEL over NCHW: C at stride H*W): a block takes 32
//               consecutive positions x all L channels into shared memory with
//               coalesced 32-element row loads, each of 16 warps reduces a slice of the
//               channels, and the results leave as coalesced rows. fwd 2 n s, bwd 3 n s.
//               FLOAT / HALF / BFLOAT16 with L <= 256 keep the tile in registers instead
//               (16-bit forward: two positions a lane; see "tile in registers" below); the
//               16-bit backward with an even inner extent stages it in shared memory by
//               asynchronous copies, two positions a lane (softmax_bwd_col_async); DOUBLE and
//               longer columns in shared memory. When L * 32 elements (x2 for bwd) exceed
//               96 KiB of shared memory, one thread per position reads its column twice
//               (fwd 3 n s, bwd 5 n s).
//   generic     any strides: one thread per softmax.
// Math in float for FLOAT / HALF / BFLOAT16, double for DOUBLE.
//
// Ceilings at 128x256x56x56 (CHANNEL mode: 802816 softmaxes of 256), 4.2 TB/s:
//   forward   x + y        f32 822 MB -> 0.196 ms, bf16 411 MB -> 0.098 ms
//   backward  y + dy + dx  f32 1233 MB -> 0.294 ms, bf16 617 MB -> 0.147 ms
// (compute: 1-2 exps per element, ~0.05 ms at the SFU rate: below both.)
// What limited forward (47% / 29% of copy NHWC, 49% / 23% NCHW, f32 / bf16; bf16 took
// as long as f32): online statistics, a serial chain of exps per thread (each new max
// rescales the sum) and two exps per merge step, so the kernels were latency-bound.
// Statistics are now two passes over registers / shared memory (max, then a sum of
// independent exps), the row kernels keep several rows per warp in flight, and the
// column tile runs 256-thread blocks (more blocks per SM overlap their phases).
#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

#include "core/activation_softmax.hpp"
#include "cuda/async_copy.cuh"
#include "cuda/ew_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

// ---- Math ----

__device__ __forceinline__ float expa(float v) { return expf(v); }
__device__ __forceinline__ double expa(double v) { return exp(v); }
__device__ __forceinline__ float loga(float v) { return logf(v); }
__device__ __forceinline__ double loga(double v) { return log(v); }

constexpr float kLog2e = 1.4426950408889634f;

// exp(d) for d = v - max <= 0 (sum), and exp(d) * c (outputs), in the 16-bit row and
// register-column kernels. FLOAT keeps expf: its kernels are not instruction-bound, and
// its results stay those of the other kernels.
// 16-bit types, whose outputs carry 8 or 11 bits, use MUFU.EX2 on d log2 e: the product's
// rounding (|d| 2^-24 relative) is far below their unit. The sum takes ex2.approx.ftz: a
// term below 2^-126 that it flushes cannot change a sum that holds the max's exp(0) = 1 (or
// is NaN). The outputs must keep subnormal results (bf16 has float's exponent range), which
// exp2f does with a rescale around the MUFU (3 more instructions); instead h = 2^(d/2) stays
// normal down to d log2 e = -252 and (h c) h rounds once into the subnormal range.
template <class T>
struct ColExp {
    __device__ static float sum(float d) { return expf(d); }
    __device__ static float out(float d, float c) { return expf(d) * c; }
};
__device__ __forceinline__ float ex2_ftz(float t) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
    return r;
}
struct ColExp16 {
    __device__ static float sum(float d) { return ex2_ftz(d * kLog2e); }
    __device__ static float out(float d, float c) {
        const float h = ex2_ftz(d * (0.5f * kLog2e));
        return h * c * h;
    }
};
template <>
struct ColExp<__half> : ColExp16 {};
template <>
struct ColExp<__nv_bfloat16> : ColExp16 {};

template <class A>
struct MaxSum {  // online softmax statistics: max and sum of exp(v - max)
    A m, s;
};

template <class A>
__device__ __forceinline__ MaxSum<A> ms_empty() {
    return MaxSum<A>{-INFINITY, A(0)};
}

template <class A>
__device__ __forceinline__ MaxSum<A> ms_add(MaxSum<A> a, A v) {
    if (v == -INFINITY) return a;  // contributes exp(-inf) = 0 (and -inf - -inf must not make a NaN)
    if (v > a.m) return MaxSum<A>{v, a.s * expa(a.m - v) + A(1)};
    return MaxSum<A>{a.m, a.s + expa(v - a.m)};  // NaN makes the sum NaN, as in the reference
}

template <class A>
__device__ __forceinline__ MaxSum<A> ms_merge(MaxSum<A> a, MaxSum<A> b) {
    const A m = a.m > b.m ? a.m : b.m;
    if (m == -INFINITY) return MaxSum<A>{m, a.s + b.s};
    const A sa = a.s == A(0) ? A(0) : a.s * expa(a.m - m);
    const A sb = b.s == A(0) ? A(0) : b.s * expa(b.m - m);
    return MaxSum<A>{m, sa + sb};
}

template <class A>
__device__ __forceinline__ MaxSum<A> warp_merge(MaxSum<A> v) {
    for (int d = 16; d > 0; d >>= 1) {
        MaxSum<A> o{__shfl_xor_sync(0xffffffffu, v.m, d), __shfl_xor_sync(0xffffffffu, v.s, d)};
        v = ms_merge(v, o);
    }
    return v;
}

template <class A>
__device__ __forceinline__ A warp_sum(A v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

template <class A>
__device__ __forceinline__ A fwd_value(A v, A m, A inv_s, A log_s, bool log_mode) {
    return log_mode ? v - m - log_s : expa(v - m) * inv_s;
}

// dx from y, dy and the group's sum (of dy * y, or of dy for log-softmax).
template <class A>
__device__ __forceinline__ A bwd_value(A y, A dy, A sum, bool log_mode) {
    return log_mode ? dy - expa(y) * sum : y * (dy - sum);
}

template <class T, class A>
__device__ __forceinline__ void put(T* p, int64_t i, A v, A alpha, A beta) {
    A r = alpha * v;
    if (beta != A(0)) r += beta * static_cast<A>(to_acc(p[i]));
    p[i] = from_acc<T>(r);
}

// ---- Row kernels: each softmax is L contiguous elements at row * L ----

constexpr int kRowMaxPerLane = 32;  // warp kernels: L <= 1024

template <class A>
__device__ __forceinline__ A warp_max(A v) {
    for (int d = 16; d > 0; d >>= 1) {
        const A o = __shfl_xor_sync(0xffffffffu, v, d);
        v = o > v ? o : v;
    }
    return v;
}

// One warp per ROWS rows at once (all loads issued before any reduction): lane k holds
// vectors k, k + 32, ... (CHUNKS of them) of each row. Statistics in two passes over the
// registers, as the reference computes them: the max (NaN skipped by the comparison),
// then the sum of exp(v - max) with independent exps (a NaN makes it NaN). Slots past the
// row's end hold -inf, which adds exp(-inf) = 0 (when the max is not finite the row's
// sum is NaN anyway). HALF / BFLOAT16 take ColExp16's exponentials (MUFU.EX2, as the
// column kernels): the registers keep x, the sum adds exp(v - max) and each output
// recomputes its own, against expf's ~8 instructions once (bf16 NHWC at 128x256x56x56 on
// the H200: 0.1223 ms against 0.1351, 80% / 73% of copy). Bytes: read x, write y (+ y if
// beta != 0).
template <class T, int VEC, int CHUNKS, int ROWS>
__global__ void __launch_bounds__(256) softmax_fwd_row_warp(const T* x, T* y, int64_t rows, int L,
                                                            typename AccOf<T>::type alpha,
                                                            typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    constexpr bool kFast = sizeof(T) == 2;
    const int lane = threadIdx.x & 31;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    for (int64_t row0 = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32 * ROWS; row0 < rows;
         row0 += warps * ROWS) {
        A v[ROWS][CHUNKS][VEC];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                const int base = (c * 32 + lane) * VEC;
                if (row0 + r < rows && base < L) {
                    const Vec<T, VEC> e = *reinterpret_cast<const Vec<T, VEC>*>(x + (row0 + r) * L + base);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) v[r][c][j] = to_acc(e.v[j]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) v[r][c][j] = -INFINITY;
                }
            }
        A m[ROWS], sum[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            m[r] = -INFINITY;
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
                for (int j = 0; j < VEC; ++j) m[r] = v[r][c][j] > m[r] ? v[r][c][j] : m[r];
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) m[r] = warp_max(m[r]);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            sum[r] = A(0);
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    if constexpr (kFast) {
                        sum[r] += ColExp<T>::sum(v[r][c][j] - m[r]);
                    } else {
                        const A e = expa(v[r][c][j] - m[r]);
                        sum[r] += e;
                        if (!log_mode) v[r][c][j] = e;
                    }
                }
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sum[r] = warp_sum(sum[r]);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const A inv_s = A(1) / sum[r], log_s = loga(sum[r]);
            T* yr = y + (row0 + r) * L;
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                const int base = (c * 32 + lane) * VEC;
                if (row0 + r < rows && base < L) {
                    Vec<T, VEC> out;
                    Vec<T, VEC> prior;
                    if (beta != A(0)) prior = *reinterpret_cast<const Vec<T, VEC>*>(yr + base);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        A o;
                        if constexpr (kFast)
                            o = log_mode ? alpha * (v[r][c][j] - m[r] - log_s)
                                         : ColExp<T>::out(v[r][c][j] - m[r], alpha * inv_s);
                        else
                            o = alpha * (log_mode ? v[r][c][j] - m[r] - log_s : v[r][c][j] * inv_s);
                        if (beta != A(0)) o += beta * static_cast<A>(to_acc(prior.v[j]));
                        out.v[j] = from_acc<T>(o);
                    }
                    *reinterpret_cast<Vec<T, VEC>*>(yr + base) = out;
                }
            }
        }
    }
}

// Backward, the same arrangement: read y, dy, write dx (+ dx if beta != 0).
template <class T, int VEC, int CHUNKS, int ROWS>
__global__ void __launch_bounds__(256) softmax_bwd_row_warp(const T* y, const T* dy, T* dx, int64_t rows, int L,
                                                            typename AccOf<T>::type alpha,
                                                            typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    const int lane = threadIdx.x & 31;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    for (int64_t row0 = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32 * ROWS; row0 < rows;
         row0 += warps * ROWS) {
        A vy[ROWS][CHUNKS][VEC], vd[ROWS][CHUNKS][VEC];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                const int base = (c * 32 + lane) * VEC;
                if (row0 + r < rows && base < L) {
                    const Vec<T, VEC> ey = *reinterpret_cast<const Vec<T, VEC>*>(y + (row0 + r) * L + base);
                    const Vec<T, VEC> ed = *reinterpret_cast<const Vec<T, VEC>*>(dy + (row0 + r) * L + base);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        vy[r][c][j] = to_acc(ey.v[j]);
                        vd[r][c][j] = to_acc(ed.v[j]);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) vy[r][c][j] = vd[r][c][j] = A(0);
                }
            }
        A sum[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            sum[r] = A(0);
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
                for (int j = 0; j < VEC; ++j) sum[r] += log_mode ? vd[r][c][j] : vd[r][c][j] * vy[r][c][j];
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sum[r] = warp_sum(sum[r]);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            T* dxr = dx + (row0 + r) * L;
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                const int base = (c * 32 + lane) * VEC;
                if (row0 + r < rows && base < L) {
                    Vec<T, VEC> out;
                    Vec<T, VEC> prior;
                    if (beta != A(0)) prior = *reinterpret_cast<const Vec<T, VEC>*>(dxr + base);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        A o = alpha * bwd_value(vy[r][c][j], vd[r][c][j], sum[r], log_mode);
                        if (beta != A(0)) o += beta * static_cast<A>(to_acc(prior.v[j]));
                        out.v[j] = from_acc<T>(o);
                    }
                    *reinterpret_cast<Vec<T, VEC>*>(dxr + base) = out;
                }
            }
        }
    }
}

// Picks CHUNKS (vectors per lane per row) for row length L, and ROWS so that a lane
// holds about kValues values per operand where a row is one vector a lane (16: four
// 16-byte vectors of FLOAT, two of HALF / BFLOAT16, whose values widen to float in
// registers; at most 4 rows), at most 2 rows of two vectors: f(integral_constant CHUNKS,
// integral_constant ROWS). Four bf16 vectors a lane took the backward kernel to 110
// registers (25% occupancy, latency-bound at 69% of copy on the H200, 2026-12-02); two:
// 64 (ptxas), the f32 kernel's shape, which runs at 100% of copy.
template <int VEC, int kValues = 16, class F>
void with_row_shape(int L, F&& f) {
    constexpr int kMax = kRowMaxPerLane / VEC;
    constexpr int kRows1 = std::min(kValues / VEC, 4), kRows2 = std::max(1, std::min(8 / VEC, 2));
    const int need = (L + 32 * VEC - 1) / (32 * VEC);
    if (need <= 1) f(std::integral_constant<int, 1>{}, std::integral_constant<int, kRows1>{});
    else if (need <= 2) f(std::integral_constant<int, 2>{}, std::integral_constant<int, kRows2>{});
    else if (need <= 4 || kMax <= 4) f(std::integral_constant<int, (kMax < 4 ? kMax : 4)>{}, std::integral_constant<int, 1>{});
    else f(std::integral_constant<int, kMax>{}, std::integral_constant<int, 1>{});
}

// The forward's kValues: the 16-bit forward holds one operand and takes four rows of one
// vector a lane (64 registers; at 128x256x56x56 bf16 NHWC on the H200 0.1190 ms against
// 0.1223 for two rows, 82% / 80% of copy).
template <class T>
constexpr int kFwdRowValues = sizeof(T) == 2 ? 32 : 16;

constexpr int kRowBlock = 512;

template <class A>
__device__ MaxSum<A> block_merge(MaxSum<A> v) {
    __shared__ A sm[32], ss[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_merge(v);
    if (lane == 0) sm[warp] = v.m, ss[warp] = v.s;
    __syncthreads();
    const int nw = blockDim.x >> 5;
    MaxSum<A> t = lane < nw ? MaxSum<A>{sm[lane], ss[lane]} : ms_empty<A>();
    t = warp_merge(t);
    __syncthreads();  // sm / ss are reused by the next row
    return t;
}

template <class A>
__device__ A block_sum(A v) {
    __shared__ A s[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) s[warp] = v;
    __syncthreads();
    A t = lane < static_cast<int>(blockDim.x >> 5) ? s[lane] : A(0);
    t = warp_sum(t);
    __syncthreads();
    return t;
}

template <class T>
__global__ void __launch_bounds__(kRowBlock) softmax_fwd_row_block(const T* x, T* y, int64_t rows, int64_t L,
                                                                   typename AccOf<T>::type alpha,
                                                                   typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* xr = x + row * L;
        MaxSum<A> st = ms_empty<A>();
        for (int64_t k = threadIdx.x; k < L; k += blockDim.x) st = ms_add(st, static_cast<A>(to_acc(xr[k])));
        st = block_merge(st);
        const A inv_s = A(1) / st.s, log_s = loga(st.s);
        T* yr = y + row * L;
        for (int64_t k = threadIdx.x; k < L; k += blockDim.x)
            put(yr, k, fwd_value(static_cast<A>(to_acc(xr[k])), st.m, inv_s, log_s, log_mode), alpha, beta);
    }
}

template <class T>
__global__ void __launch_bounds__(kRowBlock) softmax_bwd_row_block(const T* y, const T* dy, T* dx, int64_t rows,
                                                                   int64_t L, typename AccOf<T>::type alpha,
                                                                   typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* yr = y + row * L;
        const T* dr = dy + row * L;
        A sum = 0;
        for (int64_t k = threadIdx.x; k < L; k += blockDim.x) {
            const A d = to_acc(dr[k]);
            sum += log_mode ? d : d * static_cast<A>(to_acc(yr[k]));
        }
        sum = block_sum(sum);
        T* xr = dx + row * L;
        for (int64_t k = threadIdx.x; k < L; k += blockDim.x)
            put(xr, k, bwd_value(static_cast<A>(to_acc(yr[k])), static_cast<A>(to_acc(dr[k])), sum, log_mode), alpha,
                beta);
    }
}

// ---- Column kernels: element (o, l, i) at (o * L + l) * inner + i, reduced over l ----

constexpr int kColWarps = 8;  // 256 threads: up to 7 blocks per SM (the tile's shared memory bounds it)
constexpr int kColTile = 32;  // positions per block (one per lane)
constexpr size_t kColSmemMax = 96 * 1024;

template <class T>
__global__ void __launch_bounds__(kColWarps * 32) softmax_fwd_col_tile(const T* x, T* y, int64_t outer, int L,
                                                                       int64_t inner, typename AccOf<T>::type alpha,
                                                                       typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    extern __shared__ unsigned char smem_raw[];
    T* tile = reinterpret_cast<T*>(smem_raw);  // [L][32]
    __shared__ A red_m[kColWarps][kColTile], red_s[kColWarps][kColTile];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t tiles = (inner + kColTile - 1) / kColTile;
    for (int64_t b = blockIdx.x; b < outer * tiles; b += gridDim.x) {
        const int64_t o = b / tiles, i = (b % tiles) * kColTile + lane;
        const bool valid = i < inner;
        const T* xb = x + o * L * inner + i;
        // Each thread loads, and later reads back, the channels l = warp (mod kColWarps):
        // first only loads (many in flight), then the statistics from shared memory.
        if (valid) {
#pragma unroll 16
            for (int l = warp; l < L; l += kColWarps) tile[l * kColTile + lane] = xb[static_cast<int64_t>(l) * inner];
        }
        // Two passes over the staged tile, as the reference: the max (NaN skipped by the
        // comparison), then the sum of exp(v - max) with independent exps; partial results
        // combine across warps in a fixed order.
        A mx = -INFINITY;
        if (valid)
            for (int l = warp; l < L; l += kColWarps) {
                const A v = to_acc(tile[l * kColTile + lane]);
                mx = v > mx ? v : mx;
            }
        red_m[warp][lane] = mx;
        __syncthreads();
        MaxSum<A> all{-INFINITY, A(0)};
#pragma unroll
        for (int w = 0; w < kColWarps; ++w) all.m = red_m[w][lane] > all.m ? red_m[w][lane] : all.m;
        A sm = 0;
        if (valid)
#pragma unroll 4
            for (int l = warp; l < L; l += kColWarps) sm += expa(static_cast<A>(to_acc(tile[l * kColTile + lane])) - all.m);
        red_s[warp][lane] = sm;
        __syncthreads();
#pragma unroll
        for (int w = 0; w < kColWarps; ++w) all.s += red_s[w][lane];
        const A inv_s = A(1) / all.s, log_s = loga(all.s);
        if (valid) {
            T* yb = y + o * L * inner + i;
#pragma unroll 4
            for (int l = warp; l < L; l += kColWarps)
                put(yb, static_cast<int64_t>(l) * inner,
                    fwd_value(static_cast<A>(to_acc(tile[l * kColTile + lane])), all.m, inv_s, log_s, log_mode), alpha,
                    beta);
        }
        __syncthreads();  // red_m / red_s are rewritten by the next tile
    }
}

template <class T>
__global__ void __launch_bounds__(kColWarps * 32) softmax_bwd_col_tile(const T* y, const T* dy, T* dx, int64_t outer,
                                                                       int L, int64_t inner,
                                                                       typename AccOf<T>::type alpha,
                                                                       typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    extern __shared__ unsigned char smem_raw[];
    T* ty = reinterpret_cast<T*>(smem_raw);  // [L][32]
    T* td = ty + static_cast<size_t>(L) * kColTile;
    __shared__ A red[kColWarps][kColTile];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t tiles = (inner + kColTile - 1) / kColTile;
    for (int64_t b = blockIdx.x; b < outer * tiles; b += gridDim.x) {
        const int64_t o = b / tiles, i = (b % tiles) * kColTile + lane;
        const bool valid = i < inner;
        const int64_t base = o * L * inner + i;
        if (valid) {
#pragma unroll 8
            for (int l = warp; l < L; l += kColWarps) {
                ty[l * kColTile + lane] = y[base + static_cast<int64_t>(l) * inner];
                td[l * kColTile + lane] = dy[base + static_cast<int64_t>(l) * inner];
            }
        }
        A sum = 0;
        if (valid)
            for (int l = warp; l < L; l += kColWarps) {
                const A d = to_acc(td[l * kColTile + lane]);
                sum += log_mode ? d : d * static_cast<A>(to_acc(ty[l * kColTile + lane]));
            }
        red[warp][lane] = sum;
        __syncthreads();
        A all = 0;
#pragma unroll
        for (int w = 0; w < kColWarps; ++w) all += red[w][lane];
        if (valid) {
#pragma unroll 4
            for (int l = warp; l < L; l += kColWarps)
                put(dx, base + static_cast<int64_t>(l) * inner,
                    bwd_value(static_cast<A>(to_acc(ty[l * kColTile + lane])),
                              static_cast<A>(to_acc(td[l * kColTile + lane])), all, log_mode),
                    alpha, beta);
        }
        __syncthreads();
    }
}

// ---- Column kernels with the tile in registers (FLOAT, HALF, BFLOAT16; L <= 256) ----
//
// The shared-memory tile above caps occupancy by its size (backward keeps y and dy: 64 KiB
// a block in f32, 37.5% occupancy, 52% of copy on the H200) and moves a 16-bit element
// with 2-byte loads, 64-bit index math and two full expf per element (bf16 forward was
// instruction-bound at 48% of copy, ~50 instructions an element). Here a block of WARPS
// warps takes 32 * VEC consecutive positions x all L channels: lane k holds positions
// k * VEC .. k * VEC + VEC - 1 of each of its channels in one 32-bit register (VEC = 2 for
// the 16-bit forward when inner is even and the pointers 4-byte aligned, so a warp's load
// is one 128-byte row), warp w holds channels w, w + WARPS, ... (CPT slots, L <= WARPS * CPT).
// Every load of the tile is issued before any arithmetic (CPT, or 2 CPT for backward,
// 4-byte loads a thread in flight: 128 KiB an SM at 1024 threads), the per-position partial
// statistics combine across warps through shared memory in a fixed order, and nothing
// caps occupancy but registers: forward 8 warps, <= 32 slots, 80 registers (3 blocks, 768
// threads an SM: 96 KiB of loads in flight); backward 16 warps, <= 16 slots of y and dy, 64
// registers (2 blocks, 1024 threads: 128 KiB in flight), one position a lane (its 16-bit
// pair instances spilled ~600 bytes at that bound and measured 8% slower). Memory traffic
// is that of the tile kernel: fwd 2 n s, bwd 3 n s.
//
// Hot path per element from the SASS (C = 256, beta = 0, ACCURATE), against ~29 that the
// H200 issues per element at 4.2 TB/s for bf16 forward (4 bytes an element; 6 backward,
// 8 / 12 for f32): bf16 forward ~18 (half a load and a store with their address, half a
// packed max, a conversion, a subtraction, a multiply and a MUFU.EX2 per pass, two
// multiplies for the scale), bf16 backward ~17, f32 forward ~32 (expf kept), f32
// backward ~17.

constexpr int kColRegMaxL = 256;
constexpr int kColRegFwdWarps = 8, kColRegFwdBlocks = 3;   // 256 threads, CPT <= 32
constexpr int kColRegBwdWarps = 16, kColRegBwdBlocks = 2;  // 512 threads, CPT <= 16 (two operands)

// off + step, unknown to the compiler: each slot's element offset is then one add from the
// previous one and its address one IMAD.WIDE from the column's base, where the compiler
// would otherwise compute k * step, sign-extend and add it for each slot, or keep the CPT
// offsets live from the loads to the stores (which spilled at the 64-register bound). The
// base stays a visible kernel-argument pointer: global loads and stores, not generic ones.
__device__ __forceinline__ int col_next(int off, int step) {
    off += step;
    asm volatile("" : "+r"(off));
    return off;
}

// The same for a tile register before its last pass: else the compiler keeps what the
// earlier pass computed from it (float conversions, FLOAT's exps) for reuse, CPT * VEC more
// registers, and spills.
template <class S>
__device__ __forceinline__ void col_hide(S& v) {
    if constexpr (sizeof(S) == 4) {
        uint32_t u;
        memcpy(&u, &v, 4);
        asm volatile("" : "+r"(u));
        memcpy(&v, &u, 4);
    } else {
        unsigned short u;
        memcpy(&u, &v, 2);
        asm volatile("" : "+h"(u));
        memcpy(&v, &u, 2);
    }
}

// VEC adjacent positions of one channel as one register S, and their float values.
template <class T, int VEC>
struct ColPack;
template <class T>
struct ColPack<T, 1> {
    using S = T;
    __device__ static void unpack(S s, float (&f)[1]) { f[0] = to_acc(s); }
    __device__ static S pack(const float (&f)[1]) { return from_acc<T>(f[0]); }
};
template <>
struct ColPack<__half, 2> {
    using S = __half2;
    __device__ static void unpack(S s, float (&f)[2]) {
        const float2 t = __half22float2(s);
        f[0] = t.x, f[1] = t.y;
    }
    __device__ static S pack(const float (&f)[2]) { return __floats2half2_rn(f[0], f[1]); }
};
template <>
struct ColPack<__nv_bfloat16, 2> {
    using S = __nv_bfloat162;
    __device__ static void unpack(S s, float (&f)[2]) {  // a bf16 is the high half of its float
        uint32_t u;
        memcpy(&u, &s, 4);
        f[0] = __uint_as_float(u << 16), f[1] = __uint_as_float(u & 0xffff0000u);
    }
    __device__ static S pack(const float (&f)[2]) { return __floats2bfloat162_rn(f[0], f[1]); }
};

// The bits of -inf in each lane of S (padding for missing channels: adds nothing to the max,
// and exp(-inf - max) = 0 to the sum unless the max is -inf, when the column's sum is NaN
// anyway).
template <class T>
constexpr uint32_t kNegInfBits = std::is_same<T, float>::value ? 0xff800000u : std::is_same<T, __half>::value ? 0xfc00u : 0xff80u;

template <class S>
__device__ __forceinline__ S col_bits(uint32_t bits) {
    S s;
    memcpy(&s, &bits, sizeof(S));  // little-endian: a 2-byte S takes the low half
    return s;
}

template <class T, int VEC>
__device__ __forceinline__ typename ColPack<T, VEC>::S col_neg_inf() {
    return col_bits<typename ColPack<T, VEC>::S>(VEC == 2 ? kNegInfBits<T> * 0x10001u : kNegInfBits<T>);
}

// Maximum skipping NaN (the other operand is returned), as `v > m ? v : m` over floats;
// 16-bit values compare exactly as their float conversions, two at a time.
__device__ __forceinline__ float col_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ __half col_max(__half a, __half b) { return __hmax(a, b); }
__device__ __forceinline__ __half2 col_max(__half2 a, __half2 b) { return __hmax2(a, b); }
__device__ __forceinline__ __nv_bfloat16 col_max(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmax(a, b); }
__device__ __forceinline__ __nv_bfloat162 col_max(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmax2(a, b); }


// Loads the slots k < n of one operand (all CPT when FULL: no predicates), from channel
// column pointer p on, `step` elements apart; pads the others.
template <bool FULL, class T, class S, int CPT>
__device__ __forceinline__ void col_load(S (&v)[CPT], const T* p, int step, int n, S pad) {
    int off = 0;
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        if (k > 0) off = col_next(off, step);
        v[k] = FULL || k < n ? *reinterpret_cast<const S*>(p + off) : pad;
    }
}

// Both backward operands, sharing the offsets.
template <bool FULL, class T, class S, int CPT>
__device__ __forceinline__ void col_load2(S (&va)[CPT], S (&vb)[CPT], const T* a, const T* b, int step, int n, S pad) {
    int off = 0;
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        if (k > 0) off = col_next(off, step);
        va[k] = FULL || k < n ? *reinterpret_cast<const S*>(a + off) : pad;
        vb[k] = FULL || k < n ? *reinterpret_cast<const S*>(b + off) : pad;
    }
}

// Stores one tile's slots k < n (FULL: n = CPT) of a thread, value(k, o) giving slot k's
// VEC results before blending. Priors (beta != 0) load in groups of 4 before the group's
// stores: the output may alias an input, so no load can move above an earlier store, and
// one round trip a slot would serialise the pass.
template <class T, int VEC, int CPT, bool BETA, bool FULL, class F>
__device__ __forceinline__ void col_store(T* p, int step, int n, float beta, F value) {
    using P = ColPack<T, VEC>;
    using S = typename P::S;
    constexpr int G = CPT < 4 ? CPT : 4;
    int off = 0;  // of slot k0 - 1 (0 for k0 = 0)
#pragma unroll
    for (int k0 = 0; k0 < CPT; k0 += G) {
        S prior[G];
        if (BETA) {
            int q = off;
#pragma unroll
            for (int k = k0; k < k0 + G; ++k) {
                if (k > 0) q = col_next(q, step);
                if (FULL || k < n) prior[k - k0] = *reinterpret_cast<const S*>(p + q);
            }
        }
#pragma unroll
        for (int k = k0; k < k0 + G; ++k) {
            if (!FULL && k >= n) return;
            if (k > 0) off = col_next(off, step);
            float o[VEC], q[VEC];
            value(k, o);
            if (BETA) P::unpack(prior[k - k0], q);
#pragma unroll
            for (int j = 0; j < VEC; ++j)
                if (BETA) o[j] += beta * q[j];
            *reinterpret_cast<S*>(p + off) = P::pack(o);
        }
    }
}

// col_store for a thread's n slots with the LOG and BETA instances picked at run time:
// make(log) returns the value functor of the LOG instance (log a std::bool_constant).
template <class T, int VEC, int CPT, class Make>
__device__ __forceinline__ void col_store_any(T* p, int step, int n, float beta, bool log_mode, Make make) {
    auto store = [&](auto lg, auto bt) {
        constexpr bool kBeta = decltype(bt)::value;
        if (n == CPT) col_store<T, VEC, CPT, kBeta, true>(p, step, n, beta, make(lg));
        else if (n > 0) col_store<T, VEC, CPT, kBeta, false>(p, step, n, beta, make(lg));
    };
    using Yes = std::true_type;
    using No = std::false_type;
    if (log_mode) {
        if (beta != 0.0f) store(Yes{}, Yes{});
        else store(Yes{}, No{});
    } else {
        if (beta != 0.0f) store(No{}, Yes{});
        else store(No{}, No{});
    }
}

// One tile a block (no grid-stride loop: its indices would stay live in registers).
template <class T, int VEC, int CPT, int WARPS>
__global__ void __launch_bounds__(WARPS * 32, kColRegFwdBlocks)
    softmax_fwd_col_reg(const T* x, T* y, int L, int64_t inner, float alpha, float beta, bool log_mode) {
    using P = ColPack<T, VEC>;
    using S = typename P::S;
    constexpr int kPos = 32 * VEC;  // positions per tile
    __shared__ float red_m[WARPS][kPos], red_s[WARPS][kPos];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int step = WARPS * static_cast<int>(inner);  // elements between slots (host: 256 inner < 2^31)
    const int64_t tiles = (inner + kPos - 1) / kPos;
    const int64_t o = blockIdx.x / tiles, i = (blockIdx.x % tiles) * kPos + lane * VEC;
    const bool valid = i < inner;  // VEC = 2 only when inner is even: both positions or neither
    // This thread's channels: slots k < n (0 when warp >= L or the positions are past the end).
    const int n = valid ? (L - warp + WARPS - 1) / WARPS : 0;
    const bool full = n == CPT;
    const int64_t first = (o * L + warp) * inner + i;  // element (o, warp, i)
    S v[CPT];
    if (full) col_load<true>(v, x + first, step, n, col_neg_inf<T, VEC>());
    else col_load<false>(v, x + first, step, n, col_neg_inf<T, VEC>());
    // Two passes over the registers, as the reference: the max (NaN skipped), then the sum
    // of exp(v - max); partials combine across warps in a fixed order.
    S mx[2] = {col_neg_inf<T, VEC>(), col_neg_inf<T, VEC>()};
#pragma unroll
    for (int k = 0; k < CPT; ++k) mx[k & 1] = col_max(mx[k & 1], v[k]);
    float m[VEC];
    P::unpack(col_max(mx[0], mx[1]), m);
#pragma unroll
    for (int j = 0; j < VEC; ++j) red_m[warp][lane * VEC + j] = m[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        m[j] = red_m[0][lane * VEC + j];
#pragma unroll
        for (int w = 1; w < WARPS; ++w) m[j] = fmaxf(m[j], red_m[w][lane * VEC + j]);
    }
    float s[VEC] = {};
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        float f[VEC];
        P::unpack(v[k], f);
#pragma unroll
        for (int j = 0; j < VEC; ++j) s[j] += ColExp<T>::sum(f[j] - m[j]);
    }
#pragma unroll
    for (int j = 0; j < VEC; ++j) red_s[warp][lane * VEC + j] = s[j];
    __syncthreads();
    float c[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        float t = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) t += red_s[w][lane * VEC + j];
        c[j] = log_mode ? logf(t) : alpha * (1.0f / t);
    }
#pragma unroll
    for (int k = 0; k < CPT; ++k) col_hide(v[k]);
    col_store_any<T, VEC, CPT>(y + first, step, n, beta, log_mode, [&](auto lg) {
        constexpr bool kLog = decltype(lg)::value;
        return [&](int k, float (&o)[VEC]) {
            float f[VEC];
            P::unpack(v[k], f);
#pragma unroll
            for (int j = 0; j < VEC; ++j)  // LOG: alpha ((v - m) - log s), as fwd_value; else exp(v - m) (alpha / s)
                o[j] = kLog ? alpha * (f[j] - m[j] - c[j]) : ColExp<T>::out(f[j] - m[j], c[j]);
        };
    });
}

template <class T, int VEC, int CPT, int WARPS>
__global__ void __launch_bounds__(WARPS * 32, kColRegBwdBlocks)
    softmax_bwd_col_reg(const T* y, const T* dy, T* dx, int L, int64_t inner, float alpha, float beta, bool log_mode) {
    using P = ColPack<T, VEC>;
    using S = typename P::S;
    constexpr int kPos = 32 * VEC;
    __shared__ float red[WARPS][kPos];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int step = WARPS * static_cast<int>(inner);
    const int64_t tiles = (inner + kPos - 1) / kPos;
    const int64_t o = blockIdx.x / tiles, i = (blockIdx.x % tiles) * kPos + lane * VEC;
    const bool valid = i < inner;
    const int n = valid ? (L - warp + WARPS - 1) / WARPS : 0;
    const bool full = n == CPT;
    const int64_t first = (o * L + warp) * inner + i;
    S vy[CPT], vd[CPT];
    const S zero = col_bits<S>(0);  // missing channels add 0 to either sum
    if (full) col_load2<true>(vy, vd, y + first, dy + first, step, n, zero);
    else col_load2<false>(vy, vd, y + first, dy + first, step, n, zero);
    // The group's sum of dy * y (of dy for log-softmax), as bwd_row_block.
    float s[VEC] = {};
    if (log_mode) {
#pragma unroll
        for (int k = 0; k < CPT; ++k) {
            float fd[VEC];
            P::unpack(vd[k], fd);
#pragma unroll
            for (int j = 0; j < VEC; ++j) s[j] += fd[j];
        }
    } else {
#pragma unroll
        for (int k = 0; k < CPT; ++k) {
            float fy[VEC], fd[VEC];
            P::unpack(vy[k], fy);
            P::unpack(vd[k], fd);
#pragma unroll
            for (int j = 0; j < VEC; ++j) s[j] += fd[j] * fy[j];
        }
    }
#pragma unroll
    for (int j = 0; j < VEC; ++j) red[warp][lane * VEC + j] = s[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        float t = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) t += red[w][lane * VEC + j];
        s[j] = t;
    }
#pragma unroll
    for (int k = 0; k < CPT; ++k) col_hide(vy[k]), col_hide(vd[k]);
    col_store_any<T, VEC, CPT>(dx + first, step, n, beta, log_mode, [&](auto lg) {
        constexpr bool kLog = decltype(lg)::value;
        return [&](int k, float (&o)[VEC]) {
            float fy[VEC], fd[VEC];
            P::unpack(vy[k], fy);
            P::unpack(vd[k], fd);
#pragma unroll
            for (int j = 0; j < VEC; ++j) o[j] = alpha * bwd_value(fy[j], fd[j], s[j], kLog);
        };
    });
}

// Backward over NCHW channels, HALF / BFLOAT16: softmax_bwd_col_reg's tile and arithmetic
// with the tile staged in shared memory by asynchronous copies instead of held in
// registers. softmax_bwd_col_reg<bf16> keeps each 16-bit value in a 32-bit register, so
// its 64-register bound leaves 64 KiB of loads in flight an SM (Nsight Compute, H200,
// 128x256x56x56: DRAM 66%, 48% occupancy, 19 cycles between a warp's instructions,
// 72% of copy; FLOAT's 128 KiB runs at 100%), and its two-positions-a-lane instances
// spilled. Here each lane copies two adjacent positions (4 bytes, cp.async) of each of its
// slots for y and dy into shared memory, the copies bypassing registers: a block of
// WARPS warps, CPT slots, holds 2 * WARPS * CPT * 128 bytes (64 KiB for 16 x 16); at 48
// registers two blocks fit an SM, 128 KiB in flight (0.199 -> 0.175 ms, 73% -> 84% of
// copy, bf16 at that size). A lane reads back only what it copied, so one
// cp.async.wait_all and no barrier precede the sums; the sums, their fixed-order merge
// across warps and the outputs are those of softmax_bwd_col_reg (the same results).
// Needs inner even and 4-byte aligned pointers (col_pairs). Bytes: y + dy + dx (+ dx if
// beta != 0).
template <class T, int CPT, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)  // 48 registers: two blocks an SM (three spilled)
    softmax_bwd_col_async(const T* y, const T* dy, T* dx, int L, int64_t inner, float alpha, float beta, bool log_mode) {
    using P = ColPack<T, 2>;
    using S = typename P::S;
    constexpr int kPos = 64;
    extern __shared__ __align__(16) unsigned char col_async_smem[];
    S* ty = reinterpret_cast<S*>(col_async_smem);  // slot k of warp w, lane l: [(k * WARPS + w) * 32 + l]
    S* td = ty + WARPS * CPT * 32;
    __shared__ float red[WARPS][kPos];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int step = WARPS * static_cast<int>(inner);
    const int64_t tiles = (inner + kPos - 1) / kPos;
    const int64_t o = blockIdx.x / tiles, i = (blockIdx.x % tiles) * kPos + lane * 2;
    const bool valid = i < inner;  // inner even: both positions or neither
    const int n = valid ? (L - warp + WARPS - 1) / WARPS : 0;
    const int64_t first = (o * L + warp) * inner + i;
    const int me = warp * 32 + lane;
    {
        const uint32_t sy = static_cast<uint32_t>(__cvta_generic_to_shared(ty + me));
        const uint32_t sd = static_cast<uint32_t>(__cvta_generic_to_shared(td + me));
        int off = 0;
#pragma unroll
        for (int k = 0; k < CPT; ++k) {
            if (k > 0) off = col_next(off, step);
            if (k < n) {
                cp_async4(sy + k * WARPS * 32 * 4, y + first + off);
                cp_async4(sd + k * WARPS * 32 * 4, dy + first + off);
            }
        }
    }
    cp_async_wait_all();
    float s[2] = {};
#pragma unroll
    for (int k = 0; k < CPT; ++k) {
        if (k >= n) break;
        float fy[2], fd[2];
        P::unpack(ty[k * WARPS * 32 + me], fy);
        P::unpack(td[k * WARPS * 32 + me], fd);
#pragma unroll
        for (int j = 0; j < 2; ++j) s[j] += log_mode ? fd[j] : fd[j] * fy[j];
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) red[warp][lane * 2 + j] = s[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        float t = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) t += red[w][lane * 2 + j];
        s[j] = t;
    }
    col_store_any<T, 2, CPT>(dx + first, step, n, beta, log_mode, [&](auto lg) {
        constexpr bool kLog = decltype(lg)::value;
        return [&](int k, float (&out)[2]) {
            float fy[2], fd[2];
            P::unpack(ty[k * WARPS * 32 + me], fy);
            P::unpack(td[k * WARPS * 32 + me], fd);
#pragma unroll
            for (int j = 0; j < 2; ++j) out[j] = alpha * bwd_value(fy[j], fd[j], s[j], kLog);
        };
    });
}

// Long columns: one thread per position, reading its column twice.
template <class T>
__global__ void __launch_bounds__(256) softmax_fwd_col(const T* x, T* y, int64_t outer, int64_t L, int64_t inner,
                                                       typename AccOf<T>::type alpha, typename AccOf<T>::type beta,
                                                       bool log_mode) {
    using A = typename AccOf<T>::type;
    ODNN_GRID_STRIDE_LOOP(t, outer * inner) {
        const int64_t base = (t / inner) * L * inner + t % inner;
        MaxSum<A> st = ms_empty<A>();
        for (int64_t l = 0; l < L; ++l) st = ms_add(st, static_cast<A>(to_acc(x[base + l * inner])));
        const A inv_s = A(1) / st.s, log_s = loga(st.s);
        for (int64_t l = 0; l < L; ++l)
            put(y, base + l * inner, fwd_value(static_cast<A>(to_acc(x[base + l * inner])), st.m, inv_s, log_s, log_mode),
                alpha, beta);
    }
}

template <class T>
__global__ void __launch_bounds__(256) softmax_bwd_col(const T* y, const T* dy, T* dx, int64_t outer, int64_t L,
                                                       int64_t inner, typename AccOf<T>::type alpha,
                                                       typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    ODNN_GRID_STRIDE_LOOP(t, outer * inner) {
        const int64_t base = (t / inner) * L * inner + t % inner;
        A sum = 0;
        for (int64_t l = 0; l < L; ++l) {
            const A d = to_acc(dy[base + l * inner]);
            sum += log_mode ? d : d * static_cast<A>(to_acc(y[base + l * inner]));
        }
        for (int64_t l = 0; l < L; ++l) {
            const int64_t k = base + l * inner;
            put(dx, k, bwd_value(static_cast<A>(to_acc(y[k])), static_cast<A>(to_acc(dy[k])), sum, log_mode), alpha,
                beta);
        }
    }
}

// ---- Any strides: one thread per softmax ----

template <class T>
__global__ void __launch_bounds__(256) softmax_fwd_generic(const T* x, T* y, core::SoftmaxSplit s, core::Operand xo,
                                                           core::Operand yo, typename AccOf<T>::type alpha,
                                                           typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    ODNN_GRID_STRIDE_LOOP(g, s.groups) {
        MaxSum<A> st = ms_empty<A>();
        for (int64_t k = 0; k < s.length; ++k) st = ms_add(st, static_cast<A>(to_acc(x[s.offset(xo, g, k)])));
        const A inv_s = A(1) / st.s, log_s = loga(st.s);
        for (int64_t k = 0; k < s.length; ++k)
            put(y, s.offset(yo, g, k), fwd_value(static_cast<A>(to_acc(x[s.offset(xo, g, k)])), st.m, inv_s, log_s,
                                                 log_mode),
                alpha, beta);
    }
}

template <class T>
__global__ void __launch_bounds__(256) softmax_bwd_generic(const T* y, const T* dy, T* dx, core::SoftmaxSplit s,
                                                           core::Operand yo, core::Operand dyo, core::Operand dxo,
                                                           typename AccOf<T>::type alpha,
                                                           typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
    ODNN_GRID_STRIDE_LOOP(g, s.groups) {
        A sum = 0;
        for (int64_t k = 0; k < s.length; ++k) {
            const A d = to_acc(dy[s.offset(dyo, g, k)]);
            sum += log_mode ? d : d * static_cast<A>(to_acc(y[s.offset(yo, g, k)]));
        }
        for (int64_t k = 0; k < s.length; ++k)
            put(dx, s.offset(dxo, g, k),
                bwd_value(static_cast<A>(to_acc(y[s.offset(yo, g, k)])), static_cast<A>(to_acc(dy[s.offset(dyo, g, k)])),
                          sum, log_mode),
                alpha, beta);
    }
}

// ---- Host side ----

// How the softmaxes sit in memory when every operand shares one packed layout.
struct Geometry {
    enum Kind { kGeneric, kRow, kColumn } kind = kGeneric;
    int64_t outer = 1, length = 1, inner = 1;  // row: outer rows of `length`
};

bool packed(const core::Operand& o) {
    int64_t dims[core::kMaxOperandDims], strides[core::kMaxOperandDims];
    int n = 0;
    for (int d = 0; d < o.nb_dims; ++d)
        if (o.dims[d] > 1) dims[n] = o.dims[d], strides[n++] = o.strides[d];
    // Insertion sort by stride, innermost first.
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && strides[j] < strides[j - 1]; --j) {
            std::swap(strides[j], strides[j - 1]);
            std::swap(dims[j], dims[j - 1]);
        }
    int64_t expect = 1;
    for (int i = 0; i < n; ++i) {
        if (strides[i] != expect) return false;
        expect *= dims[i];
    }
    return true;
}

Geometry geometry(cudnnSoftmaxMode_t mode, std::initializer_list<const core::Operand*> ops) {
    Geometry g;
    const core::Operand& o = **ops.begin();
    for (const core::Operand* p : ops)
        if (!core::same_layout(*p, o)) return g;
    if (o.vect != 1 || !packed(o)) return g;
    const int64_t total = o.count();
    const int axis = mode == CUDNN_SOFTMAX_MODE_CHANNEL ? 1 : 0;
    const int64_t extent = o.dims[axis], stride = o.strides[axis];
    if (mode == CUDNN_SOFTMAX_MODE_CHANNEL) {
        g.length = extent;
        if (extent == 1 || stride == 1) {
            g.kind = Geometry::kRow;
            g.outer = total / extent;
        } else {
            g.kind = Geometry::kColumn;
            g.inner = stride;
            g.outer = total / (extent * stride);
        }
        return g;
    }
    g.length = total / extent;  // INSTANCE: everything but N
    if (extent == 1 || stride == g.length) {
        g.kind = Geometry::kRow;
        g.outer = extent;
    } else if (stride == 1) {
        g.kind = Geometry::kColumn;
        g.outer = 1;
        g.inner = extent;
    }
    return g;
}

template <class K>
void allow_smem(K kernel, size_t bytes) {
    if (bytes > 48 * 1024) cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

// The register column kernels take FLOAT / HALF / BFLOAT16 (DOUBLE would double their
// registers) with L <= 256 and the slot offsets in 32 bits; two positions a lane for the
// 16-bit forward when every pointer allows the 4-byte accesses. Otherwise: the
// shared-memory tile.
template <class T>
bool col_reg_fits(const Geometry& g) {
    // Slot offsets run up to kColRegMaxL * inner (also for unused slots), in int; one block a tile.
    return !std::is_same<T, double>::value && g.length <= kColRegMaxL && kColRegMaxL * g.inner <= INT_MAX &&
           g.outer * ((g.inner + 31) / 32) <= INT_MAX;
}

bool col_pairs(const Geometry& g, std::initializer_list<const void*> ptrs) {
    if (g.inner % 2 != 0) return false;
    for (const void* p : ptrs)
        if (!aligned(p, 4)) return false;
    return true;
}

// One block a tile of 32 * VEC positions (the caller checked that the count fits a grid).
template <int VEC>
unsigned col_reg_grid(const Geometry& g) {
    return static_cast<unsigned>(g.outer * ((g.inner + 32 * VEC - 1) / (32 * VEC)));
}

template <class T, int VEC>
void launch_fwd_col_reg(const Geometry& g, const T* x, T* y, float alpha, float beta, bool lg, cudaStream_t s) {
    constexpr int W = kColRegFwdWarps;
    const int L = static_cast<int>(g.length);
    if (L <= W * 8)
        softmax_fwd_col_reg<T, VEC, 8, W><<<col_reg_grid<VEC>(g), W * 32, 0, s>>>(x, y, L, g.inner, alpha, beta, lg);
    else
        softmax_fwd_col_reg<T, VEC, kColRegMaxL / W, W>
            <<<col_reg_grid<VEC>(g), W * 32, 0, s>>>(x, y, L, g.inner, alpha, beta, lg);
}

// The backward column kernels for L <= 256 (col_reg_fits), 16 warps and 4 or 16 slots:
// 16-bit pairs through shared memory (softmax_bwd_col_async) where the pointers and the
// inner extent allow 4-byte pairs (col_pairs); else one position a lane in registers
// (softmax_bwd_col_reg; its 16-bit pair instances spilled ~600 bytes at their 64-register
// bound and measured slower on the H200, bf16 128x256x56x56: 0.221 ms against 0.205 ms).
template <class T>
void launch_bwd_col(const Geometry& g, const T* y, const T* dy, T* dx, float alpha, float beta, bool lg,
                    cudaStream_t s) {
    constexpr int W = kColRegBwdWarps;
    const int L = static_cast<int>(g.length);
    auto run = [&](auto cpt) {
        constexpr int CPT = decltype(cpt)::value;
        if constexpr (sizeof(T) == 2) {
            if (col_pairs(g, {y, dy, dx})) {
                auto k = softmax_bwd_col_async<T, CPT, W>;
                const size_t smem = 2 * static_cast<size_t>(W) * CPT * 32 * 4;
                allow_smem(k, smem);
                k<<<col_reg_grid<2>(g), W * 32, smem, s>>>(y, dy, dx, L, g.inner, alpha, beta, lg);
                return;
            }
        }
        softmax_bwd_col_reg<T, 1, CPT, W><<<col_reg_grid<1>(g), W * 32, 0, s>>>(y, dy, dx, L, g.inner, alpha, beta, lg);
    };
    if (L <= W * 4) run(std::integral_constant<int, 4>{});
    else run(std::integral_constant<int, kColRegMaxL / W>{});
}

template <class T>
Status fwd_typed(const core::Handle& h, const core::SoftmaxFwdProblem& p) {
    using A = typename AccOf<T>::type;
    const T* x = static_cast<const T*>(p.x_data);
    T* y = static_cast<T*>(p.y_data);
    const A alpha = static_cast<A>(p.scale.alpha), beta = static_cast<A>(p.scale.beta);
    const bool lg = p.algo == CUDNN_SOFTMAX_LOG;
    const Geometry g = geometry(p.mode, {&p.y, &p.x});
    cudaStream_t s = h.stream;
    if (g.kind == Geometry::kRow && g.length <= 32 * kRowMaxPerLane) {
        constexpr int VEC = 16 / sizeof(T);
        const int L = static_cast<int>(g.length);
        if (L % VEC == 0 && aligned(x, 16) && aligned(y, 16)) {
            with_row_shape<VEC, kFwdRowValues<T>>(L, [&](auto chunks, auto rows) {
                constexpr int CH = decltype(chunks)::value, R = decltype(rows)::value;
                const unsigned grid = grid_for((g.outer + R - 1) / R * 32, 256);
                softmax_fwd_row_warp<T, VEC, CH, R><<<grid, 256, 0, s>>>(x, y, g.outer, L, alpha, beta, lg);
            });
        } else {
            softmax_fwd_row_warp<T, 1, kRowMaxPerLane, 1>
                <<<grid_for(g.outer * 32, 256), 256, 0, s>>>(x, y, g.outer, L, alpha, beta, lg);
        }
    } else if (g.kind == Geometry::kRow) {
        softmax_fwd_row_block<T><<<static_cast<unsigned>(std::min<int64_t>(g.outer, 65535)), kRowBlock, 0, s>>>(
            x, y, g.outer, g.length, alpha, beta, lg);
    } else if (g.kind == Geometry::kColumn && col_reg_fits<T>(g)) {
        // Not instantiated for DOUBLE (col_reg_fits rejects it); A is float here.
        if constexpr (sizeof(T) == 2) {
            if (col_pairs(g, {x, y})) launch_fwd_col_reg<T, 2>(g, x, y, alpha, beta, lg, s);
            else launch_fwd_col_reg<T, 1>(g, x, y, alpha, beta, lg, s);
        } else if constexpr (std::is_same<T, float>::value) {
            launch_fwd_col_reg<T, 1>(g, x, y, alpha, beta, lg, s);
        }
    } else if (g.kind == Geometry::kColumn && g.length * kColTile * sizeof(T) <= kColSmemMax) {
        const size_t smem = static_cast<size_t>(g.length) * kColTile * sizeof(T);
        allow_smem(softmax_fwd_col_tile<T>, smem);
        const int64_t blocks = g.outer * ((g.inner + kColTile - 1) / kColTile);
        softmax_fwd_col_tile<T><<<static_cast<unsigned>(std::min<int64_t>(blocks, 1 << 20)), kColWarps * 32, smem, s>>>(
            x, y, g.outer, static_cast<int>(g.length), g.inner, alpha, beta, lg);
    } else if (g.kind == Geometry::kColumn) {
        softmax_fwd_col<T><<<grid_for(g.outer * g.inner, 256), 256, 0, s>>>(x, y, g.outer, g.length, g.inner, alpha,
                                                                            beta, lg);
    } else {
        softmax_fwd_generic<T><<<grid_for(p.split.groups, 256), 256, 0, s>>>(x, y, p.split, p.x, p.y, alpha, beta, lg);
    }
    return core::cuda_check_launch("cuda_softmax_fwd");
}

template <class T>
Status bwd_typed(const core::Handle& h, const core::SoftmaxBwdProblem& p) {
    using A = typename AccOf<T>::type;
    const T* y = static_cast<const T*>(p.y_data);
    const T* dy = static_cast<const T*>(p.dy_data);
    T* dx = static_cast<T*>(p.dx_data);
    const A alpha = static_cast<A>(p.scale.alpha), beta = static_cast<A>(p.scale.beta);
    const bool lg = p.algo == CUDNN_SOFTMAX_LOG;
    const Geometry g = geometry(p.mode, {&p.dx, &p.y, &p.dy});
    cudaStream_t s = h.stream;
    if (g.kind == Geometry::kRow && g.length <= 32 * kRowMaxPerLane) {
        constexpr int VEC = 16 / sizeof(T);
        const int L = static_cast<int>(g.length);
        if (L % VEC == 0 && aligned(y, 16) && aligned(dy, 16) && aligned(dx, 16)) {
            with_row_shape<VEC>(L, [&](auto chunks, auto rows) {
                constexpr int CH = decltype(chunks)::value, R = decltype(rows)::value;
                const unsigned grid = grid_for((g.outer + R - 1) / R * 32, 256);
                softmax_bwd_row_warp<T, VEC, CH, R><<<grid, 256, 0, s>>>(y, dy, dx, g.outer, L, alpha, beta, lg);
            });
        } else {
            softmax_bwd_row_warp<T, 1, kRowMaxPerLane, 1>
                <<<grid_for(g.outer * 32, 256), 256, 0, s>>>(y, dy, dx, g.outer, L, alpha, beta, lg);
        }
    } else if (g.kind == Geometry::kRow) {
        softmax_bwd_row_block<T><<<static_cast<unsigned>(std::min<int64_t>(g.outer, 65535)), kRowBlock, 0, s>>>(
            y, dy, dx, g.outer, g.length, alpha, beta, lg);
    } else if (g.kind == Geometry::kColumn && col_reg_fits<T>(g)) {
        // Not instantiated for DOUBLE (col_reg_fits rejects it).
        if constexpr (sizeof(T) == 2 || std::is_same<T, float>::value)
            launch_bwd_col<T>(g, y, dy, dx, alpha, beta, lg, s);
    } else if (g.kind == Geometry::kColumn && 2 * g.length * kColTile * sizeof(T) <= kColSmemMax) {
        const size_t smem = 2 * static_cast<size_t>(g.length) * kColTile * sizeof(T);
        allow_smem(softmax_bwd_col_tile<T>, smem);
        const int64_t blocks = g.outer * ((g.inner + kColTile - 1) / kColTile);
        softmax_bwd_col_tile<T><<<static_cast<unsigned>(std::min<int64_t>(blocks, 1 << 20)), kColWarps * 32, smem, s>>>(
            y, dy, dx, g.outer, static_cast<int>(g.length), g.inner, alpha, beta, lg);
    } else if (g.kind == Geometry::kColumn) {
        softmax_bwd_col<T><<<grid_for(g.outer * g.inner, 256), 256, 0, s>>>(y, dy, dx, g.outer, g.length, g.inner,
                                                                            alpha, beta, lg);
    } else {
        softmax_bwd_generic<T><<<grid_for(p.split.groups, 256), 256, 0, s>>>(y, dy, dx, p.split, p.y, p.dy, p.dx, alpha,
                                                                              beta, lg);
    }
    return core::cuda_check_launch("cuda_softmax_bwd");
}

class CudaSoftmaxFwd final : public core::Impl<core::SoftmaxFwdProblem> {
public:
    const char* name() const override { return "cuda_softmax_fwd"; }
    Status execute(const core::Handle& h, const core::SoftmaxFwdProblem& p) const override {
        switch (p.y.dtype) {
            case CUDNN_DATA_FLOAT: return fwd_typed<float>(h, p);
            case CUDNN_DATA_DOUBLE: return fwd_typed<double>(h, p);
            case CUDNN_DATA_HALF: return fwd_typed<__half>(h, p);
            case CUDNN_DATA_BFLOAT16: return fwd_typed<__nv_bfloat16>(h, p);
            default: return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "cuda_softmax_fwd: data type %d", p.y.dtype);
        }
    }
};

class CudaSoftmaxBwd final : public core::Impl<core::SoftmaxBwdProblem> {
public:
    const char* name() const override { return "cuda_softmax_bwd"; }
    Status execute(const core::Handle& h, const core::SoftmaxBwdProblem& p) const override {
        switch (p.dx.dtype) {
            case CUDNN_DATA_FLOAT: return bwd_typed<float>(h, p);
            case CUDNN_DATA_DOUBLE: return bwd_typed<double>(h, p);
            case CUDNN_DATA_HALF: return bwd_typed<__half>(h, p);
            case CUDNN_DATA_BFLOAT16: return bwd_typed<__nv_bfloat16>(h, p);
            default: return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "cuda_softmax_bwd: data type %d", p.dx.dtype);
        }
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::SoftmaxFwdProblem, CudaSoftmaxFwd, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::SoftmaxBwdProblem, CudaSoftmaxBwd, core::kPriorityGeneric);

}  // namespace odnn::cuda
