// CUDA batch normalization: forward inference, forward training and backward, every
// mode, FLOAT / DOUBLE / HALF / BFLOAT16, with the fused activation and add.
//
// Kernels, by layout of x (y, z, dy, dx, dz must share x's strides for the fast ones):
//   nchw    packed NCHW / NCDHW, SPATIAL: one block per (channel, slice of N*S), the
//           channel's run of S elements read in 16-byte vectors (S divisible by the width)
//   nhwc    packed NHWC / NDHWC, SPATIAL (also N x C x 1 x 1): statistics block =
//           channels x rows, each thread V consecutive channels, 16-byte vectors (C
//           divisible by V); apply: each thread a fixed chunk of V channels (its
//           coefficients in registers) over a stride of rows
//   generic any strides, either mode: per-element index arithmetic
// Statistics use a two-level reduction: partial sums per (slice, feature) in the
// workspace (doubles, accumulated from float partials, shifted by a sample of the
// feature so large means do not cancel), then one thread per feature adds the slices
// in a fixed order (deterministic) and finishes the feature's coefficients.
//
// Bytes moved, T = the tensor's size in bytes:
//   forward inference  2T  (read x, write y; + T for z, + T when beta != 0)
//   forward training   3T  (statistics: read x; apply: read x, write y; + z / beta as above)
//   backward           5T  (statistics: read x, dy; apply: read x, dy, write dx;
//                           + 2T for y with an activation, + T for dz, + T when beta != 0;
//                           + T when savedMean / savedInvVariance are NULL)
// plus O(features * slices) bytes of partial sums.
#include <algorithm>

#include "core/cuda_runtime.hpp"
#include "core/elem_access.hpp"
#include "core/knob.hpp"
#include "core/norm_math.hpp"
#include "core/norm_problem.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

namespace odnn::cuda {

using core::FastDiv;
using core::NormActivation;
using core::NormCommon;
using core::NormGeometry;
using core::NormOps;
using core::Status;
using core::TensorDesc;

namespace {

constexpr int kThreads = 256;
constexpr int kMaxSlices = 1024;

enum class Layout { generic, nchw, nhwc };

struct Strides {
    int64_t st[core::kDimMax];
};

Strides strides_of(const TensorDesc& d) {
    Strides s{};
    for (int i = 0; i < d.nb_dims; ++i) s.st[i] = d.strides[i];
    return s;
}

// ---- Planning (host) ----

bool packed_nchw(const TensorDesc& t) {
    int64_t s = 1;
    for (int i = t.nb_dims - 1; i >= 0; --i) {
        if (t.dims[i] > 1 && t.strides[i] != s) return false;
        s *= t.dims[i];
    }
    return true;
}

bool packed_nhwc(const TensorDesc& t) {
    int64_t s = 1;
    if (t.dims[1] > 1 && t.strides[1] != 1) return false;
    s = t.dims[1];
    for (int i = t.nb_dims - 1; i >= 2; --i) {
        if (t.dims[i] > 1 && t.strides[i] != s) return false;
        s *= t.dims[i];
    }
    return t.dims[0] == 1 || t.strides[0] == s;
}

bool same_layout(const TensorDesc& a, const TensorDesc& b) {
    for (int i = 0; i < a.nb_dims; ++i)
        if (a.dims[i] > 1 && a.strides[i] != b.strides[i]) return false;
    return true;
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Workspace carving and the reduction split. Depends on shapes and strides only, so
// the size queries and the runs agree.
struct Plan {
    Layout layout = Layout::generic;
    int64_t F = 0, M = 0;
    int P = 1;
    size_t off_a = 0, off_b = 0, off_mean = 0, off_istd = 0, off_coef = 0, bytes = 0;
};

Plan make_plan(const NormCommon& k, std::initializer_list<const TensorDesc*> others, const TensorDesc& x) {
    Plan pl;
    const NormGeometry& g = k.g;
    pl.F = g.features();
    pl.M = g.count();
    bool uniform = true;
    for (const TensorDesc* t : others)
        if (t && t->is_set() && !same_layout(x, *t)) uniform = false;
    // N x C x 1 x 1 is both; a C = 1 NCHW tensor also reads as NHWC but wants the NCHW kernel.
    if (uniform && g.per_channel && packed_nhwc(x) && (g.s == 1 || !packed_nchw(x)))
        pl.layout = Layout::nhwc;
    else if (uniform && g.per_channel && packed_nchw(x))
        pl.layout = Layout::nchw;
    int64_t p = 1;
    switch (pl.layout) {
        case Layout::nchw: p = clamp64(ceil_div(1024, g.c), 1, std::max<int64_t>(1, g.n * g.s / 8192)); break;
        case Layout::nhwc:
            p = clamp64(ceil_div(1024, ceil_div(g.c, 256)), 1, std::max<int64_t>(1, g.n * g.s / 32));
            break;
        case Layout::generic:
            if (g.per_channel)
                p = clamp64(ceil_div(1024, pl.F), 1, std::max<int64_t>(1, pl.M / 4096));
            else
                p = clamp64(ceil_div(512, ceil_div(pl.F, kThreads)), 1, std::max<int64_t>(1, pl.M / 32));
            break;
    }
    pl.P = static_cast<int>(std::min<int64_t>(p, kMaxSlices));
    const size_t f8 = static_cast<size_t>(pl.F) * 8;
    size_t off = 0;
    pl.off_a = off;
    off = align256(off + f8 * pl.P);
    pl.off_b = off;
    off = align256(off + f8 * pl.P);
    pl.off_mean = off;
    off = align256(off + f8);
    pl.off_istd = off;
    off = align256(off + f8);
    pl.off_coef = off;
    off = align256(off + 5 * f8);  // five coefficient arrays, sized for double
    pl.bytes = off + 256;           // room to align a caller's workspace pointer
    return pl;
}

char* align_up256(char* p) {
    return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + 255) / 256 * 256);
}

// ---- Block reduction of two doubles ----

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// Sums a and b over the block (blockDim.x == kThreads); the result is valid in thread 0.
__device__ __forceinline__ void block_sum2(double& a, double& b) {
    __shared__ double sh[2][kThreads / 32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        sh[0][warp] = a;
        sh[1][warp] = b;
    }
    __syncthreads();
    if (warp == 0) {
        a = lane < kThreads / 32 ? sh[0][lane] : 0.0;
        b = lane < kThreads / 32 ? sh[1][lane] : 0.0;
        a = warp_sum(a);
        b = warp_sum(b);
    }
}

// Per element: forward a += x - K, b += (x - K)^2 (K = the feature's first element);
// backward a += d, b += d * (x - mean), with d = dy * act'(y).
template <class C, bool kBwd>
__device__ __forceinline__ void contrib(C x, C dy, C y, bool has_act, const NormActivation& act, C center, C& a,
                                        C& b) {
    if constexpr (!kBwd) {
        const C d = x - center;
        a += d;
        b += d * d;
    } else {
        C d = dy;
        if (has_act) d *= core::norm_act_grad_from_y(act, y);
        a += d;
        b += d * (x - center);
    }
}

// ---- Statistics: packed NCHW, one block per (channel, slice) ----

template <class T, int V, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_nchw(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, bool has_act,
               NormActivation act, const double* __restrict__ mean, int64_t cs, uint32_t s, FastDiv fd_s,
               int64_t nvec, int P, double* __restrict__ part_a, double* __restrict__ part_b, int64_t F) {
    using C = typename Io<T>::C;
    const int64_t c = blockIdx.x;
    const int p = blockIdx.y;
    const T* xc = x + c * s;
    const T* dyc = kBwd ? dy + c * s : nullptr;
    const T* yc = (kBwd && has_act) ? y + c * s : nullptr;
    const C center = kBwd ? static_cast<C>(mean[c]) : Io<T>::in(xc[0]);
    const int64_t v0 = nvec * p / P, v1 = nvec * (p + 1) / P;
    double acc_a = 0.0, acc_b = 0.0;
    auto offset = [&](int64_t v) {
        const uint32_t j = static_cast<uint32_t>(v) * V;  // n * S + s within the channel
        const uint32_t n = fd_s.div(j);
        return static_cast<int64_t>(n) * cs + (j - n * s);
    };
    constexpr int U = 4;  // vectors in flight per thread
    int64_t v = v0 + threadIdx.x;
    for (; v + (U - 1) * kThreads < v1; v += U * kThreads) {
        Vec<T, V> xv[U], dv[U], yv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t off = offset(v + u * kThreads);
            xv[u] = load_vec<T, V>(xc + off);
            if constexpr (kBwd) {
                dv[u] = load_vec<T, V>(dyc + off);
                if (has_act) yv[u] = load_vec<T, V>(yc + off);
            }
        }
        C fa = 0, fb = 0;
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < V; ++i)
                contrib<C, kBwd>(Io<T>::in(xv[u].v[i]), kBwd ? Io<T>::in(dv[u].v[i]) : C(0),
                                 (kBwd && has_act) ? Io<T>::in(yv[u].v[i]) : C(0), has_act, act, center, fa, fb);
        acc_a += fa;
        acc_b += fb;
    }
    for (; v < v1; v += kThreads) {
        const int64_t off = offset(v);
        const Vec<T, V> xv = load_vec<T, V>(xc + off);
        Vec<T, V> dv{}, yv{};
        if constexpr (kBwd) {
            dv = load_vec<T, V>(dyc + off);
            if (has_act) yv = load_vec<T, V>(yc + off);
        }
        C fa = 0, fb = 0;
#pragma unroll
        for (int i = 0; i < V; ++i)
            contrib<C, kBwd>(Io<T>::in(xv.v[i]), kBwd ? Io<T>::in(dv.v[i]) : C(0),
                             (kBwd && has_act) ? Io<T>::in(yv.v[i]) : C(0), has_act, act, center, fa, fb);
        acc_a += fa;
        acc_b += fb;
    }
    block_sum2(acc_a, acc_b);
    if (threadIdx.x == 0) {
        part_a[static_cast<int64_t>(p) * F + c] = acc_a;
        part_b[static_cast<int64_t>(p) * F + c] = acc_b;
    }
}

// ---- Statistics: packed NHWC (rows x C), block = (TX channel groups) x (TY rows) ----

template <class T, int V, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_nhwc(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, bool has_act,
               NormActivation act, const double* __restrict__ mean, int64_t c_total, int64_t rows, int P,
               double* __restrict__ part_a, double* __restrict__ part_b) {
    using C = typename Io<T>::C;
    extern __shared__ double shm[];  // [2][TY][TX * V]
    const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
    const int p = blockIdx.y;
    const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * TX + tx) * V;
    const bool active = c0 < c_total;  // V divides C
    C center[V];
    double acc_a[V], acc_b[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
        acc_a[i] = acc_b[i] = 0.0;
        center[i] = C(0);
        if (active) center[i] = kBwd ? static_cast<C>(mean[c0 + i]) : Io<T>::in(x[c0 + i]);
    }
    const int64_t r0 = rows * p / P, r1 = rows * (p + 1) / P;
    if (active) {
        constexpr int U = 4;
        int64_t r = r0 + ty;
        auto step = [&](const int64_t* rr, int cnt) {
            Vec<T, V> xv[U], dv[U], yv[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if (u >= cnt) break;
                const int64_t off = rr[u] * c_total + c0;
                xv[u] = load_vec<T, V>(x + off);
                if constexpr (kBwd) {
                    dv[u] = load_vec<T, V>(dy + off);
                    if (has_act) yv[u] = load_vec<T, V>(y + off);
                }
            }
#pragma unroll
            for (int i = 0; i < V; ++i) {
                C fa = 0, fb = 0;
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (u >= cnt) break;
                    contrib<C, kBwd>(Io<T>::in(xv[u].v[i]), kBwd ? Io<T>::in(dv[u].v[i]) : C(0),
                                     (kBwd && has_act) ? Io<T>::in(yv[u].v[i]) : C(0), has_act, act, center[i], fa,
                                     fb);
                }
                acc_a[i] += fa;
                acc_b[i] += fb;
            }
        };
        for (; r + (U - 1) * TY < r1; r += U * TY) {
            const int64_t rr[U] = {r, r + TY, r + 2 * TY, r + 3 * TY};
            step(rr, U);
        }
        for (; r < r1; r += TY) {
            const int64_t rr[U] = {r, r, r, r};
            step(rr, 1);
        }
    }
    const int width = TX * V;
    double* sa = shm;
    double* sb = shm + TY * width;
#pragma unroll
    for (int i = 0; i < V; ++i) {
        sa[ty * width + tx * V + i] = acc_a[i];
        sb[ty * width + tx * V + i] = acc_b[i];
    }
    __syncthreads();
    if (ty == 0 && active) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            double a = 0.0, b = 0.0;
            for (int k = 0; k < TY; ++k) {
                a += sa[k * width + tx * V + i];
                b += sb[k * width + tx * V + i];
            }
            part_a[static_cast<int64_t>(p) * c_total + c0 + i] = a;
            part_b[static_cast<int64_t>(p) * c_total + c0 + i] = b;
        }
    }
}

// ---- Statistics: any strides ----

// SPATIAL: one block per (channel, slice of the N * S elements).
template <class T, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_generic_channel(NormGeometry g, const T* __restrict__ x, Strides xs, const T* __restrict__ dy, Strides dys,
                          const T* __restrict__ y, Strides ys, bool has_act, NormActivation act,
                          const double* __restrict__ mean, int P, double* __restrict__ part_a,
                          double* __restrict__ part_b) {
    using C = typename Io<T>::C;
    const int64_t f = blockIdx.x;
    const int p = blockIdx.y;
    const int64_t M = g.count(), F = g.features();
    const C center = kBwd ? static_cast<C>(mean[f]) : Io<T>::in(x[g.offset(xs.st, 0, f)]);
    double acc_a = 0.0, acc_b = 0.0;
    for (int64_t m = M * p / P + threadIdx.x; m < M * (p + 1) / P; m += kThreads) {
        C a = 0, b = 0;
        contrib<C, kBwd>(Io<T>::in(x[g.offset(xs.st, m, f)]), kBwd ? Io<T>::in(dy[g.offset(dys.st, m, f)]) : C(0),
                         (kBwd && has_act) ? Io<T>::in(y[g.offset(ys.st, m, f)]) : C(0), has_act, act, center, a, b);
        acc_a += a;
        acc_b += b;
    }
    block_sum2(acc_a, acc_b);
    if (threadIdx.x == 0) {
        part_a[static_cast<int64_t>(p) * F + f] = acc_a;
        part_b[static_cast<int64_t>(p) * F + f] = acc_b;
    }
}

// PER_ACTIVATION: one thread per feature (consecutive features are usually adjacent
// in memory), each summing a slice of the batch.
template <class T, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_generic_feature(NormGeometry g, const T* __restrict__ x, Strides xs, const T* __restrict__ dy,
                          Strides dys, const T* __restrict__ y, Strides ys, bool has_act, NormActivation act,
                          const double* __restrict__ mean, int P, double* __restrict__ part_a,
                          double* __restrict__ part_b) {
    using C = typename Io<T>::C;
    const int64_t f = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const int p = blockIdx.y;
    const int64_t M = g.count(), F = g.features();
    if (f >= F) return;
    const C center = kBwd ? static_cast<C>(mean[f]) : Io<T>::in(x[g.offset(xs.st, 0, f)]);
    double acc_a = 0.0, acc_b = 0.0;
    for (int64_t m = M * p / P; m < M * (p + 1) / P; ++m) {
        C a = 0, b = 0;
        contrib<C, kBwd>(Io<T>::in(x[g.offset(xs.st, m, f)]), kBwd ? Io<T>::in(dy[g.offset(dys.st, m, f)]) : C(0),
                         (kBwd && has_act) ? Io<T>::in(y[g.offset(ys.st, m, f)]) : C(0), has_act, act, center, a, b);
        acc_a += a;
        acc_b += b;
    }
    part_a[static_cast<int64_t>(p) * F + f] = acc_a;
    part_b[static_cast<int64_t>(p) * F + f] = acc_b;
}

// ---- Per-feature finishing (one thread per feature) ----

struct ParamIo {
    Strides sb, mv;  // scale/bias and mean/variance strides
    int dtype;       // FLOAT or DOUBLE
};

// The P partial sums of feature f (pieces p * F + f), two arrays. The sequential form: one
// thread per feature, pieces in order. The parallel form: a block of 32 features x W warps
// (W = min(P, 32)), warp w summing pieces w, w + W, ..., then warp 0 adding the W warp sums
// in order (deterministic too). The sequential form is latency-bound where P is large: one
// block over 256 channels with 1024 NHWC pieces measured 140 us on the H200 (nearly half
// of an NHWC training forward; the parallel form took NHWC training forward 0.51 -> 0.40 ms
// f32, 0.44 -> 0.30 bf16). Where P is small (NCHW plans, per-activation mode: many features,
// few pieces) 32-thread blocks would cap occupancy, so the sequential form stays there.
// ODNN_BN_FINALIZE=parallel or =sequential forces one (the GPU suite runs both).
constexpr int kFinLanes = 32, kFinMaxWarps = 32, kFinParallelPieces = 8;

bool finalize_parallel(int P) {
    static const bool force_par = core::knob_is("ODNN_BN_FINALIZE", "parallel");
    static const bool force_seq = core::knob_is("ODNN_BN_FINALIZE", "sequential");
    if (force_par || force_seq) return force_par;
    return P >= kFinParallelPieces;
}

struct FinalizeLaunch {
    dim3 grid, block;
};

FinalizeLaunch finalize_launch(int64_t F, int P) {
    if (!finalize_parallel(P)) return {dim3(static_cast<unsigned>(ceil_div(F, kThreads))), dim3(kThreads)};
    const unsigned warps = static_cast<unsigned>(std::max(1, std::min(P, kFinMaxWarps)));
    return {dim3(static_cast<unsigned>(ceil_div(F, kFinLanes))), dim3(kFinLanes, warps)};
}

// Feature of this thread (threadIdx.x within blockDim.x features per block) and, in
// *sa / *sb, its sums: valid in the threads with threadIdx.y == 0. Every thread of the
// block must call it (a barrier when blockDim.y > 1).
__device__ __forceinline__ int64_t sum_partials(const double* __restrict__ part_a, const double* __restrict__ part_b,
                                                int P, int64_t F, double* sa, double* sb) {
    const int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int W = static_cast<int>(blockDim.y), w = static_cast<int>(threadIdx.y);
    double ra = 0.0, rb = 0.0;
    if (f < F)
        for (int p = w; p < P; p += W) {
            ra += part_a[static_cast<int64_t>(p) * F + f];
            rb += part_b[static_cast<int64_t>(p) * F + f];
        }
    if (W > 1) {
        __shared__ double sh_a[kFinMaxWarps][kFinLanes], sh_b[kFinMaxWarps][kFinLanes];
        sh_a[w][threadIdx.x] = ra;
        sh_b[w][threadIdx.x] = rb;
        __syncthreads();
        if (w == 0) {
            ra = rb = 0.0;
            for (int i = 0; i < W; ++i) {
                ra += sh_a[i][threadIdx.x];
                rb += sh_b[i][threadIdx.x];
            }
        }
    }
    *sa = ra;
    *sb = rb;
    return f;
}

// Forward statistics -> mean and inverse std (workspace), saved and running values,
// and the apply coefficients y = a * (x - mean) + bias.
template <class C>
__global__ void finalize_forward(NormGeometry g, const double* __restrict__ part_a, const double* __restrict__ part_b,
                                 int P, const void* x, int x_dtype, Strides xs, ParamIo pio, const void* scale,
                                 const void* bias, void* run_mean, void* run_var, void* save_mean, void* save_istd,
                                 double factor, double eps, double* mean_out, double* istd_out, C* coef_a, C* coef_m,
                                 C* coef_b, C* coef_ml) {
    const int64_t F = g.features();
    double sa, sb;
    const int64_t f = sum_partials(part_a, part_b, P, F, &sa, &sb);
    if (f >= F || threadIdx.y != 0) return;
    const double M = static_cast<double>(g.count());
    const double center = core::load_elem(x, g.offset(xs.st, 0, f), x_dtype);
    const double dm = sa / M;
    const double mean = center + dm;
    double var = sb / M - dm * dm;
    if (var < 0.0) var = 0.0;
    const double istd = 1.0 / sqrt(var + eps);
    if (mean_out) {
        mean_out[f] = mean;
        istd_out[f] = istd;
    }
    const int64_t mo = g.param_offset(pio.mv.st, f);
    if (run_mean) {
        const double unbias = g.count() > 1 ? M / (M - 1.0) : 1.0;
        const double rm = core::load_elem(run_mean, mo, pio.dtype);
        const double rv = core::load_elem(run_var, mo, pio.dtype);
        core::store_elem(run_mean, mo, pio.dtype, (1.0 - factor) * rm + factor * mean);
        core::store_elem(run_var, mo, pio.dtype, (1.0 - factor) * rv + factor * var * unbias);
    }
    if (save_mean) {
        core::store_elem(save_mean, mo, pio.dtype, mean);
        core::store_elem(save_istd, mo, pio.dtype, istd);
    }
    if (coef_a) {
        const int64_t so = g.param_offset(pio.sb.st, f);
        coef_a[f] = static_cast<C>(core::load_elem(scale, so, pio.dtype) * istd);
        coef_m[f] = static_cast<C>(mean);
        coef_b[f] = static_cast<C>(core::load_elem(bias, so, pio.dtype));
        coef_ml[f] = static_cast<C>(mean - static_cast<double>(static_cast<C>(mean)));
    }
}

template <class C>
__global__ void coef_inference(NormGeometry g, ParamIo pio, const void* scale, const void* bias, const void* mean,
                               const void* var, double eps, C* coef_a, C* coef_m, C* coef_b, C* coef_ml) {
    const int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (f >= g.features()) return;
    const int64_t so = g.param_offset(pio.sb.st, f), mo = g.param_offset(pio.mv.st, f);
    const double istd = 1.0 / sqrt(core::load_elem(var, mo, pio.dtype) + eps);
    coef_a[f] = static_cast<C>(core::load_elem(scale, so, pio.dtype) * istd);
    const double m = core::load_elem(mean, mo, pio.dtype);
    coef_m[f] = static_cast<C>(m);
    coef_ml[f] = static_cast<C>(m - static_cast<double>(static_cast<C>(m)));
    coef_b[f] = static_cast<C>(core::load_elem(bias, so, pio.dtype));
}

__global__ void load_saved(NormGeometry g, ParamIo pio, const void* saved_mean, const void* saved_istd,
                           double* mean_out, double* istd_out) {
    const int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (f >= g.features()) return;
    const int64_t mo = g.param_offset(pio.mv.st, f);
    mean_out[f] = core::load_elem(saved_mean, mo, pio.dtype);
    istd_out[f] = core::load_elem(saved_istd, mo, pio.dtype);
}

// Backward sums -> dscale, dbias (blended) and dx = A * d + B * (x - mean) + Cc.
template <class C>
__global__ void finalize_backward(NormGeometry g, const double* __restrict__ part_a,
                                  const double* __restrict__ part_b, int P, const double* mean_in,
                                  const double* istd_in, ParamIo pio, const void* scale, void* dscale, void* dbias,
                                  double p_alpha, double p_beta, C* coef_a, C* coef_b, C* coef_c, C* coef_m,
                                  C* coef_ml) {
    const int64_t F = g.features();
    double sum_d, sum_dxm;
    const int64_t f = sum_partials(part_a, part_b, P, F, &sum_d, &sum_dxm);
    if (f >= F || threadIdx.y != 0) return;
    const double M = static_cast<double>(g.count());
    // The statistics kernels centred on mean rounded to C; move the sum to the exact mean.
    sum_dxm -= (mean_in[f] - static_cast<double>(static_cast<C>(mean_in[f]))) * sum_d;
    const double istd = istd_in[f];
    const double dscale_v = sum_dxm * istd;
    const int64_t so = g.param_offset(pio.sb.st, f);
    core::blend_store(dscale, so, pio.dtype, dscale_v, p_alpha, p_beta);
    core::blend_store(dbias, so, pio.dtype, sum_d, p_alpha, p_beta);
    const double k1 = core::load_elem(scale, so, pio.dtype) * istd;
    coef_a[f] = static_cast<C>(k1);
    coef_b[f] = static_cast<C>(-k1 * istd * dscale_v / M);
    coef_c[f] = static_cast<C>(-k1 * sum_d / M);
    coef_m[f] = static_cast<C>(mean_in[f]);
    coef_ml[f] = static_cast<C>(mean_in[f] - static_cast<double>(static_cast<C>(mean_in[f])));
}

// ---- Apply: packed layouts, vectors of V elements ----

template <class C>
__device__ __forceinline__ C fwd_value(C x, C z, int ops, const NormActivation& act, C a, C m, C ml, C b) {
    C v = a * ((x - m) - ml) + b;  // the mean as two C values: no cancellation when |mean| >> std
    if (ops == 2) v += z;
    if (ops != 0) v = core::norm_act_forward(act, v);
    return v;
}

template <class T, int V, Layout L>
__global__ void __launch_bounds__(kThreads)
    apply_forward_packed(const T* __restrict__ x, const T* __restrict__ z, T* y, int64_t nvec, FastDiv fd_s,
                         FastDiv fd_c, const typename Io<T>::C* __restrict__ ca,
                         const typename Io<T>::C* __restrict__ cm, const typename Io<T>::C* __restrict__ cb,
                         const typename Io<T>::C* __restrict__ cml, int ops, NormActivation act,
                         typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(v, nvec) {
        const uint32_t e = static_cast<uint32_t>(v) * V;
        const uint32_t c0 = L == Layout::nchw ? fd_c.mod(fd_s.div(e)) : fd_c.mod(e);
        const Vec<T, V> xv = load_vec<T, V>(x + e);
        Vec<T, V> zv{}, yv{};
        if (ops == 2) zv = load_vec<T, V>(z + e);
        if (beta != C(0)) yv = load_vec<T, V>(y + e);
        Vec<T, V> out;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const uint32_t c = L == Layout::nchw ? c0 : c0 + i;
            C r = alpha * fwd_value<C>(Io<T>::in(xv.v[i]), ops == 2 ? Io<T>::in(zv.v[i]) : C(0), ops, act, ca[c], cm[c],
                                       cml[c], cb[c]);
            if (beta != C(0)) r += beta * Io<T>::in(yv.v[i]);
            out.v[i] = Io<T>::out(r);
        }
        store_vec<T, V>(y + e, out);
    }
}

template <class T, int V, Layout L>
__global__ void __launch_bounds__(kThreads)
    apply_backward_packed(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, T* dx, T* dz,
                          int64_t nvec, FastDiv fd_s, FastDiv fd_c, const typename Io<T>::C* __restrict__ ca,
                          const typename Io<T>::C* __restrict__ cbb, const typename Io<T>::C* __restrict__ cc,
                          const typename Io<T>::C* __restrict__ cm, const typename Io<T>::C* __restrict__ cml,
                          int ops, NormActivation act, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(v, nvec) {
        const uint32_t e = static_cast<uint32_t>(v) * V;
        const uint32_t c0 = L == Layout::nchw ? fd_c.mod(fd_s.div(e)) : fd_c.mod(e);
        const Vec<T, V> xv = load_vec<T, V>(x + e);
        const Vec<T, V> dv = load_vec<T, V>(dy + e);
        Vec<T, V> yv{}, old{}, oldz{};
        if (ops != 0) yv = load_vec<T, V>(y + e);
        if (beta != C(0)) {
            old = load_vec<T, V>(dx + e);
            if (ops == 2) oldz = load_vec<T, V>(dz + e);
        }
        Vec<T, V> out, outz;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const uint32_t c = L == Layout::nchw ? c0 : c0 + i;
            C d = Io<T>::in(dv.v[i]);
            if (ops != 0) d *= core::norm_act_grad_from_y(act, Io<T>::in(yv.v[i]));
            C r = alpha * (ca[c] * d + cbb[c] * ((Io<T>::in(xv.v[i]) - cm[c]) - cml[c]) + cc[c]);
            C rz = alpha * d;
            if (beta != C(0)) {
                r += beta * Io<T>::in(old.v[i]);
                if (ops == 2) rz += beta * Io<T>::in(oldz.v[i]);
            }
            out.v[i] = Io<T>::out(r);
            outz.v[i] = Io<T>::out(rz);
        }
        store_vec<T, V>(dx + e, out);
        if (ops == 2) store_vec<T, V>(dz + e, outz);
    }
}

// ---- Apply: packed NHWC, one channel chunk per thread ----
//
// Ceiling at 128x256x56x56 (4.2 TB/s): inference 2T = 822 MB f32 / 411 MB bf16 ->
// 0.196 / 0.098 ms; training 3T 0.29 / 0.147 ms; backward 5T 0.49 / 0.245 ms. What
// limited apply_*_packed on NHWC (0.40 / 0.49 ms inference f32 / bf16): every vector
// of V channels read its 4-5 coefficients per channel from global memory, 4-5 x V
// scalar loads whose warp accesses span V * 32 floats (8 L1 wavefronts each for bf16):
// load-issue bound at ~1 wavefront per element. Here the thread's V channels never
// change (the thread count is a multiple of C / V), so the coefficients are loaded
// once into registers and the loop over rows issues one 16-byte load per tensor.

// Threads t = row * (C / V) + cv for row < row_step; the thread walks rows row,
// row + row_step, ...
struct NhwcWalk {
    uint32_t rows, cvn, row_step, lanes;
    FastDiv fd_cv;
};

NhwcWalk nhwc_walk(int64_t rows, int64_t c, int v) {
    NhwcWalk w;
    w.rows = static_cast<uint32_t>(rows);
    w.cvn = static_cast<uint32_t>(c / v);
    // About two resident waves on 132 SMs; at least about four rows per thread (the
    // coefficient loads amortised; small problems walk several rows too).
    const int64_t target = int64_t{1} << 19;
    w.row_step = static_cast<uint32_t>(clamp64(ceil_div(target, w.cvn), 1, std::max<int64_t>(1, ceil_div(rows, 4))));
    w.lanes = w.row_step * w.cvn;
    w.fd_cv = FastDiv(w.cvn);
    return w;
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    apply_forward_nhwc(const T* __restrict__ x, const T* __restrict__ z, T* y, NhwcWalk w,
                       const typename Io<T>::C* __restrict__ ca, const typename Io<T>::C* __restrict__ cm,
                       const typename Io<T>::C* __restrict__ cb, const typename Io<T>::C* __restrict__ cml, int ops,
                       NormActivation act, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= w.lanes) return;
    const uint32_t r0 = w.fd_cv.div(t);
    const uint32_t c0 = (t - r0 * w.cvn) * V;
    const size_t row_len = static_cast<size_t>(w.cvn) * V;
    C a[V], m[V], b[V], ml[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
        a[i] = ca[c0 + i];
        m[i] = cm[c0 + i];
        b[i] = cb[c0 + i];
        ml[i] = cml[c0 + i];
    }
    for (uint32_t r = r0; r < w.rows; r += w.row_step) {
        const size_t e = r * row_len + c0;
        const Vec<T, V> xv = load_vec<T, V>(x + e);
        Vec<T, V> zv{}, yv{};
        if (ops == 2) zv = load_vec<T, V>(z + e);
        if (beta != C(0)) yv = load_vec<T, V>(y + e);
        Vec<T, V> out;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            C v = alpha * fwd_value<C>(Io<T>::in(xv.v[i]), ops == 2 ? Io<T>::in(zv.v[i]) : C(0), ops, act, a[i], m[i],
                                       ml[i], b[i]);
            if (beta != C(0)) v += beta * Io<T>::in(yv.v[i]);
            out.v[i] = Io<T>::out(v);
        }
        store_vec<T, V>(y + e, out);
    }
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    apply_backward_nhwc(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, T* dx, T* dz,
                        NhwcWalk w, const typename Io<T>::C* __restrict__ ca,
                        const typename Io<T>::C* __restrict__ cbb, const typename Io<T>::C* __restrict__ cc,
                        const typename Io<T>::C* __restrict__ cm, const typename Io<T>::C* __restrict__ cml, int ops,
                        NormActivation act, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= w.lanes) return;
    const uint32_t r0 = w.fd_cv.div(t);
    const uint32_t c0 = (t - r0 * w.cvn) * V;
    const size_t row_len = static_cast<size_t>(w.cvn) * V;
    C a[V], bb[V], k[V], m[V], ml[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
        a[i] = ca[c0 + i];
        bb[i] = cbb[c0 + i];
        k[i] = cc[c0 + i];
        m[i] = cm[c0 + i];
        ml[i] = cml[c0 + i];
    }
    for (uint32_t r = r0; r < w.rows; r += w.row_step) {
        const size_t e = r * row_len + c0;
        const Vec<T, V> xv = load_vec<T, V>(x + e);
        const Vec<T, V> dv = load_vec<T, V>(dy + e);
        Vec<T, V> yv{}, old{}, oldz{};
        if (ops != 0) yv = load_vec<T, V>(y + e);
        if (beta != C(0)) {
            old = load_vec<T, V>(dx + e);
            if (ops == 2) oldz = load_vec<T, V>(dz + e);
        }
        Vec<T, V> out, outz;
#pragma unroll
        for (int i = 0; i < V; ++i) {
            C d = Io<T>::in(dv.v[i]);
            if (ops != 0) d *= core::norm_act_grad_from_y(act, Io<T>::in(yv.v[i]));
            C rv = alpha * (a[i] * d + bb[i] * ((Io<T>::in(xv.v[i]) - m[i]) - ml[i]) + k[i]);
            C rz = alpha * d;
            if (beta != C(0)) {
                rv += beta * Io<T>::in(old.v[i]);
                if (ops == 2) rz += beta * Io<T>::in(oldz.v[i]);
            }
            out.v[i] = Io<T>::out(rv);
            outz.v[i] = Io<T>::out(rz);
        }
        store_vec<T, V>(dx + e, out);
        if (ops == 2) store_vec<T, V>(dz + e, outz);
    }
}

// ---- Apply: any strides ----

struct ElemIndex {
    int64_t m, f;
};

__device__ __forceinline__ ElemIndex elem_index(const NormGeometry& g, int64_t i) {
    const int64_t cs = g.c * g.s;
    const int64_t n = i / cs;
    const int64_t rem = i - n * cs;
    const int64_t c = rem / g.s;
    const int64_t sp = rem - c * g.s;
    return g.per_channel ? ElemIndex{n * g.s + sp, c} : ElemIndex{n, c * g.s + sp};
}

template <class T>
__global__ void apply_forward_generic(NormGeometry g, const T* x, Strides xs, const T* z, Strides zs, T* y,
                                      Strides ys, int64_t total, const typename Io<T>::C* ca,
                                      const typename Io<T>::C* cm, const typename Io<T>::C* cb,
                                      const typename Io<T>::C* cml, int ops, NormActivation act,
                                      typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(i, total) {
        const ElemIndex e = elem_index(g, i);
        const int64_t yo = g.offset(ys.st, e.m, e.f);
        C r = alpha * fwd_value<C>(Io<T>::in(x[g.offset(xs.st, e.m, e.f)]),
                                   ops == 2 ? Io<T>::in(z[g.offset(zs.st, e.m, e.f)]) : C(0), ops, act, ca[e.f],
                                   cm[e.f], cml[e.f], cb[e.f]);
        if (beta != C(0)) r += beta * Io<T>::in(y[yo]);
        y[yo] = Io<T>::out(r);
    }
}

template <class T>
__global__ void apply_backward_generic(NormGeometry g, const T* x, Strides xs, const T* dy, Strides dys, const T* y,
                                       Strides ys, T* dx, Strides dxs, T* dz, Strides dzs, int64_t total,
                                       const typename Io<T>::C* ca, const typename Io<T>::C* cbb,
                                       const typename Io<T>::C* cc, const typename Io<T>::C* cm,
                                       const typename Io<T>::C* cml, int ops, NormActivation act,
                                       typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(i, total) {
        const ElemIndex e = elem_index(g, i);
        C d = Io<T>::in(dy[g.offset(dys.st, e.m, e.f)]);
        if (ops != 0) d *= core::norm_act_grad_from_y(act, Io<T>::in(y[g.offset(ys.st, e.m, e.f)]));
        const int64_t o = g.offset(dxs.st, e.m, e.f);
        C r = alpha *
              (ca[e.f] * d + cbb[e.f] * ((Io<T>::in(x[g.offset(xs.st, e.m, e.f)]) - cm[e.f]) - cml[e.f]) + cc[e.f]);
        if (beta != C(0)) r += beta * Io<T>::in(dx[o]);
        dx[o] = Io<T>::out(r);
        if (ops == 2) {
            const int64_t zo = g.offset(dzs.st, e.m, e.f);
            C rz = alpha * d;
            if (beta != C(0)) rz += beta * Io<T>::in(dz[zo]);
            dz[zo] = Io<T>::out(rz);
        }
    }
}

// ---- Host orchestration ----

unsigned feature_blocks(int64_t F) { return static_cast<unsigned>(ceil_div(F, kThreads)); }

// Vector width for the packed kernels: the type's 16-byte width when the run it
// vectorises (S for NCHW, C for NHWC) divides evenly and every pointer is aligned.
template <class T>
int choose_vec(const Plan& pl, const NormGeometry& g, std::initializer_list<const void*> ptrs) {
    constexpr int kV = Io<T>::kVec;
    const int64_t run = pl.layout == Layout::nchw ? g.s : g.c;
    if (run % kV != 0) return 1;
    for (const void* p : ptrs)
        if (p && !aligned_to(p, sizeof(T) * kV)) return 1;
    return kV;
}

struct StatsArgs {
    const void* x;
    const void* dy;
    const void* y;
    Strides xs, dys, ys;
    bool has_act;
    NormActivation act;
    const double* mean;  // backward: the centre of each feature
    double* part_a;
    double* part_b;
};

template <class T, bool kBwd, int V>
void launch_stats_v(const Plan& pl, const NormGeometry& g, const StatsArgs& a, cudaStream_t s) {
    const T* x = static_cast<const T*>(a.x);
    const T* dy = static_cast<const T*>(a.dy);
    const T* y = static_cast<const T*>(a.y);
    if (pl.layout == Layout::nchw) {
        const int64_t nvec = g.n * g.s / V;
        const dim3 grid(static_cast<unsigned>(g.c), static_cast<unsigned>(pl.P));
        stats_nchw<T, V, kBwd><<<grid, kThreads, 0, s>>>(x, dy, y, a.has_act, a.act, a.mean, g.c * g.s,
                                                         static_cast<uint32_t>(g.s),
                                                         FastDiv(static_cast<uint32_t>(g.s)), nvec, pl.P, a.part_a,
                                                         a.part_b, pl.F);
    } else {
        const int64_t groups = g.c / V;
        const int tx = static_cast<int>(std::min<int64_t>(256, (groups + 31) / 32 * 32));
        const int ty = kThreads / tx;
        const dim3 block(tx, ty);
        const dim3 grid(static_cast<unsigned>(ceil_div(groups, tx)), static_cast<unsigned>(pl.P));
        const size_t shm = 2 * sizeof(double) * static_cast<size_t>(ty) * tx * V;
        stats_nhwc<T, V, kBwd><<<grid, block, shm, s>>>(x, dy, y, a.has_act, a.act, a.mean, g.c, g.n * g.s, pl.P,
                                                        a.part_a, a.part_b);
    }
}

template <class T, bool kBwd>
void launch_stats(const Plan& pl, const NormGeometry& g, const StatsArgs& a, int vec, cudaStream_t s) {
    const T* x = static_cast<const T*>(a.x);
    const T* dy = static_cast<const T*>(a.dy);
    const T* y = static_cast<const T*>(a.y);
    if (pl.layout == Layout::generic) {
        if (g.per_channel) {
            const dim3 grid(static_cast<unsigned>(pl.F), static_cast<unsigned>(pl.P));
            stats_generic_channel<T, kBwd><<<grid, kThreads, 0, s>>>(g, x, a.xs, dy, a.dys, y, a.ys, a.has_act, a.act,
                                                                     a.mean, pl.P, a.part_a, a.part_b);
        } else {
            const dim3 grid(feature_blocks(pl.F), static_cast<unsigned>(pl.P));
            stats_generic_feature<T, kBwd><<<grid, kThreads, 0, s>>>(g, x, a.xs, dy, a.dys, y, a.ys, a.has_act, a.act,
                                                                     a.mean, pl.P, a.part_a, a.part_b);
        }
        return;
    }
    if (vec == Io<T>::kVec)
        launch_stats_v<T, kBwd, Io<T>::kVec>(pl, g, a, s);
    else
        launch_stats_v<T, kBwd, 1>(pl, g, a, s);
}

template <class T, int V>
void launch_apply_forward_v(const Plan& pl, const NormGeometry& g, const T* x, const T* z, T* y,
                            const typename Io<T>::C* coef, int ops, const NormActivation& act,
                            typename Io<T>::C alpha, typename Io<T>::C beta, cudaStream_t s) {
    const int64_t F = pl.F;
    const int64_t nvec = g.n * g.c * g.s / V;
    const FastDiv fd_s(static_cast<uint32_t>(g.s)), fd_c(static_cast<uint32_t>(g.c));
    if (pl.layout == Layout::nchw)
        apply_forward_packed<T, V, Layout::nchw><<<grid_for(nvec), kThreads, 0, s>>>(
            x, z, y, nvec, fd_s, fd_c, coef, coef + F, coef + 2 * F, coef + 4 * F, ops, act, alpha, beta);
    else {
        const NhwcWalk w = nhwc_walk(g.n * g.s, g.c, V);
        apply_forward_nhwc<T, V><<<static_cast<unsigned>(ceil_div(w.lanes, kThreads)), kThreads, 0, s>>>(
            x, z, y, w, coef, coef + F, coef + 2 * F, coef + 4 * F, ops, act, alpha, beta);
    }
}

template <class T, int V>
void launch_apply_backward_v(const Plan& pl, const NormGeometry& g, const T* x, const T* dy, const T* y, T* dx, T* dz,
                             const typename Io<T>::C* coef, int ops, const NormActivation& act,
                             typename Io<T>::C alpha, typename Io<T>::C beta, cudaStream_t s) {
    const int64_t F = pl.F;
    const int64_t nvec = g.n * g.c * g.s / V;
    const FastDiv fd_s(static_cast<uint32_t>(g.s)), fd_c(static_cast<uint32_t>(g.c));
    if (pl.layout == Layout::nchw)
        apply_backward_packed<T, V, Layout::nchw><<<grid_for(nvec), kThreads, 0, s>>>(
            x, dy, y, dx, dz, nvec, fd_s, fd_c, coef, coef + F, coef + 2 * F, coef + 3 * F, coef + 4 * F, ops, act,
            alpha, beta);
    else {
        const NhwcWalk w = nhwc_walk(g.n * g.s, g.c, V);
        apply_backward_nhwc<T, V><<<static_cast<unsigned>(ceil_div(w.lanes, kThreads)), kThreads, 0, s>>>(
            x, dy, y, dx, dz, w, coef, coef + F, coef + 2 * F, coef + 3 * F, coef + 4 * F, ops, act, alpha, beta);
    }
}

ParamIo param_io(const NormCommon& k, const TensorDesc& sb, const TensorDesc& mv) {
    ParamIo p;
    p.sb = strides_of(sb);
    p.mv = strides_of(mv);
    p.dtype = static_cast<int>(k.param_dtype);
    return p;
}

// Forward apply (inference and training): coefficients already in `coef` (a, mean, bias).
template <class T>
void launch_apply_forward(const Plan& pl, const NormCommon& k, const TensorDesc& xd, const void* xp,
                          const TensorDesc& zd, const void* zp, const TensorDesc& yd, void* yp,
                          const typename Io<T>::C* coef, const core::Scale& out, cudaStream_t s) {
    using C = typename Io<T>::C;
    const NormGeometry& g = k.g;
    const T* x = static_cast<const T*>(xp);
    const T* z = static_cast<const T*>(zp);
    T* y = static_cast<T*>(yp);
    const int ops = static_cast<int>(k.ops);
    const C alpha = static_cast<C>(out.alpha), beta = static_cast<C>(out.beta);
    if (pl.layout == Layout::generic) {
        const int64_t total = g.n * g.c * g.s;
        apply_forward_generic<T><<<grid_for(total), kThreads, 0, s>>>(g, x, strides_of(xd), z, strides_of(zd), y,
                                                                      strides_of(yd), total, coef, coef + pl.F,
                                                                      coef + 2 * pl.F, coef + 4 * pl.F, ops, k.act,
                                                                      alpha, beta);
        return;
    }
    if (choose_vec<T>(pl, g, {xp, zp, yp}) == Io<T>::kVec)
        launch_apply_forward_v<T, Io<T>::kVec>(pl, g, x, z, y, coef, ops, k.act, alpha, beta, s);
    else
        launch_apply_forward_v<T, 1>(pl, g, x, z, y, coef, ops, k.act, alpha, beta, s);
}

// ---- Implementations ----

class CudaBnFwdInference final : public core::Impl<core::BnFwdInferenceProblem> {
public:
    const char* name() const override { return "cuda_batchnorm_fwd_inference"; }
    Status execute(const core::Handle& h, const core::BnFwdInferenceProblem& p) const override {
        const Plan pl = make_plan(p.k, {&p.y, &p.z}, p.x);
        DeviceScratch scratch;
        ODNN_RETURN_IF_ERROR(scratch.allocate(5 * static_cast<size_t>(pl.F) * sizeof(double), h.stream));
        return with_float_type(p.k.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            C* coef = static_cast<C*>(scratch.get());
            coef_inference<C><<<feature_blocks(pl.F), kThreads, 0, h.stream>>>(
                p.k.g, param_io(p.k, p.scale_bias, p.mean_var), p.scale, p.bias, p.mean, p.var, p.k.epsilon, coef,
                coef + pl.F, coef + 2 * pl.F, coef + 4 * pl.F);
            launch_apply_forward<T>(pl, p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, coef, p.out, h.stream);
            return launched(name());
        });
    }
};

class CudaBnFwdTraining final : public core::Impl<core::BnFwdTrainingProblem> {
public:
    const char* name() const override { return "cuda_batchnorm_fwd_training"; }
    size_t workspace_size(const core::BnFwdTrainingProblem& p) const override {
        return make_plan(p.k, {&p.y, &p.z}, p.x).bytes;
    }
    Status execute(const core::Handle& h, const core::BnFwdTrainingProblem& p) const override {
        const Plan pl = make_plan(p.k, {&p.y, &p.z}, p.x);
        DeviceScratch scratch;
        char* ws = static_cast<char*>(p.workspace);
        if (!p.caller_workspace) {
            ODNN_RETURN_IF_ERROR(scratch.allocate(pl.bytes, h.stream));
            ws = static_cast<char*>(scratch.get());
        }
        ws = align_up256(ws);
        return with_float_type(p.k.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const NormGeometry& g = p.k.g;
            const FinalizeLaunch fin = finalize_launch(pl.F, pl.P);
            StatsArgs a{};
            a.x = p.x_data;
            a.xs = strides_of(p.x);
            a.part_a = reinterpret_cast<double*>(ws + pl.off_a);
            a.part_b = reinterpret_cast<double*>(ws + pl.off_b);
            const int vec = pl.layout == Layout::generic ? 1 : choose_vec<T>(pl, g, {p.x_data});
            launch_stats<T, false>(pl, g, a, vec, h.stream);
            C* coef = reinterpret_cast<C*>(ws + pl.off_coef);
            finalize_forward<C><<<fin.grid, fin.block, 0, h.stream>>>(
                g, a.part_a, a.part_b, pl.P, p.x_data, static_cast<int>(p.k.dtype), a.xs,
                param_io(p.k, p.scale_bias, p.mean_var), p.scale, p.bias, p.running_mean, p.running_var, p.save_mean,
                p.save_inv_var, p.factor, p.k.epsilon, nullptr, nullptr, coef, coef + pl.F, coef + 2 * pl.F,
                coef + 4 * pl.F);
            launch_apply_forward<T>(pl, p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, coef, p.out, h.stream);
            return launched(name());
        });
    }
};

class CudaBnBackward final : public core::Impl<core::BnBackwardProblem> {
public:
    const char* name() const override { return "cuda_batchnorm_bwd"; }
    size_t workspace_size(const core::BnBackwardProblem& p) const override {
        return make_plan(p.k, {&p.y, &p.dy, &p.dx, &p.dz}, p.x).bytes;
    }
    Status execute(const core::Handle& h, const core::BnBackwardProblem& p) const override {
        const Plan pl = make_plan(p.k, {&p.y, &p.dy, &p.dx, &p.dz}, p.x);
        DeviceScratch scratch;
        char* ws = static_cast<char*>(p.workspace);
        if (!p.caller_workspace) {
            ODNN_RETURN_IF_ERROR(scratch.allocate(pl.bytes, h.stream));
            ws = static_cast<char*>(scratch.get());
        }
        ws = align_up256(ws);
        return with_float_type(p.k.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const NormGeometry& g = p.k.g;
            const FinalizeLaunch fin = finalize_launch(pl.F, pl.P);
            const ParamIo pio = param_io(p.k, p.scale_bias, p.mean_var);
            double* mean = reinterpret_cast<double*>(ws + pl.off_mean);
            double* istd = reinterpret_cast<double*>(ws + pl.off_istd);
            StatsArgs a{};
            a.x = p.x_data;
            a.xs = strides_of(p.x);
            a.part_a = reinterpret_cast<double*>(ws + pl.off_a);
            a.part_b = reinterpret_cast<double*>(ws + pl.off_b);
            const bool has_act = p.k.ops != NormOps::norm;
            const int vec = pl.layout == Layout::generic
                                ? 1
                                : choose_vec<T>(pl, g, {p.x_data, p.dy_data, has_act ? p.y_data : nullptr, p.dx_data,
                                                        p.k.ops == NormOps::add_act ? p.dz_data : nullptr});
            if (p.saved_mean) {
                load_saved<<<feature_blocks(pl.F), kThreads, 0, h.stream>>>(g, pio, p.saved_mean, p.saved_inv_var,
                                                                            mean, istd);
            } else {
                launch_stats<T, false>(pl, g, a, vec, h.stream);
                finalize_forward<C><<<fin.grid, fin.block, 0, h.stream>>>(
                    g, a.part_a, a.part_b, pl.P, p.x_data, static_cast<int>(p.k.dtype), a.xs, pio, nullptr, nullptr,
                    nullptr, nullptr, nullptr, nullptr, 1.0, p.k.epsilon, mean, istd, nullptr, nullptr, nullptr, nullptr);
            }
            a.dy = p.dy_data;
            a.dys = strides_of(p.dy);
            a.y = has_act ? p.y_data : nullptr;
            a.ys = strides_of(p.y);
            a.has_act = has_act;
            a.act = p.k.act;
            a.mean = mean;
            launch_stats<T, true>(pl, g, a, vec, h.stream);
            C* coef = reinterpret_cast<C*>(ws + pl.off_coef);
            finalize_backward<C><<<fin.grid, fin.block, 0, h.stream>>>(
                g, a.part_a, a.part_b, pl.P, mean, istd, pio, p.scale, p.dscale, p.dbias, p.param.alpha, p.param.beta,
                coef, coef + pl.F, coef + 2 * pl.F, coef + 3 * pl.F, coef + 4 * pl.F);
            const int ops = static_cast<int>(p.k.ops);
            const C alpha = static_cast<C>(p.data.alpha), beta = static_cast<C>(p.data.beta);
            const T* x = static_cast<const T*>(p.x_data);
            const T* dy = static_cast<const T*>(p.dy_data);
            const T* y = static_cast<const T*>(p.y_data);
            T* dx = static_cast<T*>(p.dx_data);
            T* dz = static_cast<T*>(p.dz_data);
            if (pl.layout == Layout::generic) {
                const int64_t total = g.n * g.c * g.s;
                apply_backward_generic<T><<<grid_for(total), kThreads, 0, h.stream>>>(
                    g, x, a.xs, dy, a.dys, y, a.ys, dx, strides_of(p.dx), dz, strides_of(p.dz), total, coef,
                    coef + pl.F, coef + 2 * pl.F, coef + 3 * pl.F, coef + 4 * pl.F, ops, p.k.act, alpha, beta);
            } else if (vec == Io<T>::kVec) {
                launch_apply_backward_v<T, Io<T>::kVec>(pl, g, x, dy, y, dx, dz, coef, ops, p.k.act, alpha, beta,
                                                        h.stream);
            } else {
                launch_apply_backward_v<T, 1>(pl, g, x, dy, y, dx, dz, coef, ops, p.k.act, alpha, beta, h.stream);
            }
            return launched(name());
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::BnFwdInferenceProblem, CudaBnFwdInference, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::BnFwdTrainingProblem, CudaBnFwdTraining, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::BnBackwardProblem, CudaBnBackward, core::kPriorityGeneric);

}  // namespace odnn::cuda
