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
//               When L * 32 elements (x2 for bwd) exceed 96 KiB of shared memory, one
//               thread per position reads its column twice (fwd 3 n s, bwd 5 n s).
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

#include "core/activation_softmax.hpp"
#include "cuda/ew_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

// ---- Math ----

__device__ __forceinline__ float expa(float v) { return expf(v); }
__device__ __forceinline__ double expa(double v) { return exp(v); }
__device__ __forceinline__ float loga(float v) { return logf(v); }
__device__ __forceinline__ double loga(double v) { return log(v); }

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
// sum is NaN anyway). Bytes: read x, write y (+ y if beta != 0).
template <class T, int VEC, int CHUNKS, int ROWS>
__global__ void __launch_bounds__(256) softmax_fwd_row_warp(const T* x, T* y, int64_t rows, int L,
                                                            typename AccOf<T>::type alpha,
                                                            typename AccOf<T>::type beta, bool log_mode) {
    using A = typename AccOf<T>::type;
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
                    const A e = expa(v[r][c][j] - m[r]);
                    sum[r] += e;
                    if (!log_mode) v[r][c][j] = e;
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
                        A o = alpha * (log_mode ? v[r][c][j] - m[r] - log_s : v[r][c][j] * inv_s);
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
// holds about 16 values per operand (four 16-byte vectors of FLOAT, two of HALF /
// BFLOAT16, whose values widen to float in registers; at most 4 rows): f(integral_constant
// CHUNKS, integral_constant ROWS). Four bf16 vectors a lane took the backward kernel to
// 110 registers (25% occupancy, latency-bound at 69% of copy on the H200, 2026-12-02);
// two: 64 (ptxas), the f32 kernel's shape, which runs at 100% of copy.
template <int VEC, class F>
void with_row_shape(int L, F&& f) {
    constexpr int kMax = kRowMaxPerLane / VEC;
    constexpr int kRows1 = std::min(16 / VEC, 4), kRows2 = std::max(1, std::min(8 / VEC, 2));  // one / two vectors a row
    const int need = (L + 32 * VEC - 1) / (32 * VEC);
    if (need <= 1) f(std::integral_constant<int, 1>{}, std::integral_constant<int, kRows1>{});
    else if (need <= 2) f(std::integral_constant<int, 2>{}, std::integral_constant<int, kRows2>{});
    else if (need <= 4 || kMax <= 4) f(std::integral_constant<int, (kMax < 4 ? kMax : 4)>{}, std::integral_constant<int, 1>{});
    else f(std::integral_constant<int, kMax>{}, std::integral_constant<int, 1>{});
}

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
            with_row_shape<VEC>(L, [&](auto chunks, auto rows) {
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
