// CUDA pooling forward and backward: every mode, 1-D to 6-D, any strides,
// FLOAT / DOUBLE / HALF / BFLOAT16 (and INT8 forward). Rules in core/pool_problem.hpp.
//
// Threads walk a tensor in its memory order (dims sorted by stride), so NCHW and NHWC
// both read and write coalesced; index math uses multiply-shift division. 2-D and 3-D
// windows are compiled with a fixed rank (loops unroll); channels-last tensors whose C
// is a multiple of the 16-byte vector width give each thread V channels (one vector
// load per window position).
//   forward      one thread per output (V outputs channels-last): reads its window
//                (neighbouring windows share inputs through L1/L2), writes y.
//                Bytes: x + y (+ y if beta != 0).
//   backward avg one thread per dx element (or V): gathers dy / count over the windows
//                that cover it (deterministic, no atomics). Bytes: dy + dx (+ dx if beta).
//   backward max pass 1, one thread per output: the window's argmax (its position in the
//                window: 1 byte for windows up to 254 elements) into scratch; pass 2, one
//                thread per dx element: adds dy of the covering windows whose argmax it is.
//                Bytes: x + dy + dx + 2 * |y| * sizeof(index) / sizeof(T) (+ dx if beta).
// The input y of the backward call is not read: the argmax is recomputed from x.
//
// 2-D pooling on FLOAT / HALF / BFLOAT16 takes the fast paths below (any strides; the
// walk follows the layout): forward pool_fwd_2d (32-bit index math, 3x3 and 2x2 windows
// unrolled, float arithmetic); max backward pool_bwd_max_2d (x and dy staged in shared
// memory per band of rows, argmax once per window, gather per dx element: one pass, no
// scratch). The kernels above remain for 1-D and 3-D+, DOUBLE, INT8, average backward
// and windows over 255 positions.
//
// Ceilings at 128x256x56x56, 3x3 window, stride 2, pad 1 (y 128x256x28x28), 4.2 TB/s:
//   forward       x + y           f32 514 MB -> 0.122 ms, bf16 257 MB -> 0.061 ms
//   backward max  x + dy + dx     f32 925 MB -> 0.220 ms, bf16 462 MB -> 0.110 ms
//                 (the bench also counts y: 2x + 2y, so the ceiling reads 111% of copy)
// What limited the generic kernels (fwd 20% / 37% of copy NCHW / NHWC f32, max bwd 8%):
// 64-bit coordinates through the Walk, window loops with local-memory arrays (64-160
// bytes of stack), and for max backward a second pass through an argmax scratch with
// one thread per dx element re-reading dy of every covering window.
// Max backward 3x3/2 and 2x2/2 now take pool_bwd_max_gather (no shared memory). What
// limited the shared-memory band kernel (1.6-1.7 ms, 13-27% of copy, every layout and
// type): one block per (image, channel group, band) serialised stage -> argmax -> gather
// behind two __syncthreads with few blocks resident (32 KB of shared memory each), a
// strided staging gather with two divisions per element, NCHW channel groups of one
// channel, and band halo rows staged twice. Predicted for the gather kernel: x + dy + dx
// at 75-85% of copy (0.26-0.29 ms f32, 0.13-0.15 ms bf16), L1 traffic ~5 loads/element.
#include <algorithm>

#include "core/cuda_runtime.hpp"
#include "core/elem_access.hpp"
#include "core/pool_problem.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

namespace odnn::cuda {

namespace {

using core::FastDiv;
using core::PoolGeom;
using core::Status;
using core::TensorDesc;

constexpr int kThreads = 256;
constexpr int kMaxNsp = core::kMaxPoolingDims;
constexpr int kMaxNd = kMaxNsp + 2;

// A tensor's dims walked in memory order (order[0] outermost), with C counted in groups
// of V channels. Coordinates come back in logical order (0 = N, 1 = C group, 2.. spatial).
struct Walk {
    int nd = 0;
    int order[kMaxNd] = {};
    uint32_t size[kMaxNd] = {};
    FastDiv div[kMaxNd];
    int64_t dense[kMaxNd] = {};  // strides of a dense buffer in this order (the argmax scratch)

    __device__ __forceinline__ void coords(uint32_t t, int64_t* c) const {
#pragma unroll
        for (int k = kMaxNd - 1; k >= 0; --k) {
            if (k >= nd) continue;
            const uint32_t q = div[k].div(t);
            c[order[k]] = t - q * size[k];
            t = q;
        }
    }
    __device__ __forceinline__ int64_t dense_pos(const int64_t* c) const {
        int64_t p = 0;
#pragma unroll
        for (int i = 0; i < kMaxNd; ++i)
            if (i < nd) p += c[i] * dense[i];
        return p;
    }
};

Walk make_walk(const TensorDesc& t, int v) {
    Walk w;
    w.nd = t.nb_dims;
    int idx[kMaxNd];
    for (int i = 0; i < t.nb_dims; ++i) idx[i] = i;
    std::stable_sort(idx, idx + t.nb_dims, [&](int a, int b) { return t.strides[a] > t.strides[b]; });
    for (int k = 0; k < t.nb_dims; ++k) {
        w.order[k] = idx[k];
        w.size[k] = static_cast<uint32_t>(idx[k] == 1 ? t.dims[1] / v : t.dims[idx[k]]);
        w.div[k] = FastDiv(w.size[k]);
    }
    int64_t s = 1;
    for (int k = t.nb_dims - 1; k >= 0; --k) {
        w.dense[idx[k]] = s;
        s *= w.size[k];
    }
    return w;
}

int64_t walk_total(const Walk& w) {
    int64_t n = 1;
    for (int k = 0; k < w.nd; ++k) n *= w.size[k];
    return n;
}

struct St {
    int64_t s[kMaxNd];
};

St strides_of(const TensorDesc& t) {
    St s{};
    for (int i = 0; i < t.nb_dims; ++i) s.s[i] = t.strides[i];
    return s;
}

template <int NSP>
__device__ __forceinline__ int nsp_of(const PoolGeom& g) {
    return NSP ? NSP : g.nsp;
}

// Offset of coordinates c (C as a group index: channel c[1] * V).
template <int NSP, int V>
__device__ __forceinline__ int64_t offset(const PoolGeom& g, const St& st, const int64_t* c) {
    int64_t off = c[0] * st.s[0] + c[1] * V * st.s[1];
#pragma unroll
    for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d)
        if (d < nsp_of<NSP>(g)) off += c[d + 2] * st.s[d + 2];
    return off;
}

template <class T, int V>
__device__ __forceinline__ void load_c(const T* p, typename Io<T>::C* out) {
    if constexpr (V == 1) {
        out[0] = Io<T>::in(*p);
    } else {
        const Vec<T, V> v = load_vec<T, V>(p);
#pragma unroll
        for (int i = 0; i < V; ++i) out[i] = Io<T>::in(v.v[i]);
    }
}

template <class T, int V>
__device__ __forceinline__ void store_c(T* p, const typename Io<T>::C* in) {
    if constexpr (V == 1) {
        *p = Io<T>::out(in[0]);
    } else {
        Vec<T, V> v;
#pragma unroll
        for (int i = 0; i < V; ++i) v.v[i] = Io<T>::out(in[i]);
        store_vec<T, V>(p, v);
    }
}

// The window of output c, clipped; false when it holds no input.
template <int NSP>
__device__ __forceinline__ bool window_bounds(const PoolGeom& g, const int64_t* c, int64_t* lo, int64_t* hi) {
    bool any = true;
#pragma unroll
    for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d)
        if (d < nsp_of<NSP>(g)) {
            g.window(d, c[d + 2], &lo[d], &hi[d]);
            any = any && hi[d] > lo[d];
        }
    return any;
}

// Position of input i[] in the full window of output c (row-major).
template <int NSP>
__device__ __forceinline__ int64_t window_local(const PoolGeom& g, const int64_t* c, const int64_t* i) {
    int64_t local = 0;
#pragma unroll
    for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d)
        if (d < nsp_of<NSP>(g)) local = local * g.win[d] + (i[d] - (c[d + 2] * g.stride[d] - g.pad[d]));
    return local;
}

// Steps i[] through the clipped window (row-major); false after the last position.
template <int NSP>
__device__ __forceinline__ bool next_in_window(const PoolGeom& g, int64_t* i, const int64_t* lo, const int64_t* hi) {
    const int n = nsp_of<NSP>(g);
#pragma unroll
    for (int d = (NSP ? NSP : kMaxNsp) - 1; d >= 0; --d) {
        if (d >= n) continue;
        if (++i[d] < hi[d]) return true;
        i[d] = lo[d];
    }
    return false;
}

// Max (with the NaN rules) or sum of the window for V channels; for max, arg[k] is the
// chosen position in the window (-1 when the window is empty); for sums, *count.
template <class T, int NSP, int V>
__device__ void window_reduce(const PoolGeom& g, const T* __restrict__ x, const St& xs, const int64_t* c,
                              typename Io<T>::C* res, int64_t* arg, int64_t* count) {
    using C = typename Io<T>::C;
    int64_t lo[kMaxNsp], hi[kMaxNsp], i[kMaxNsp];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        res[k] = C(0);
        arg[k] = -1;
    }
    *count = 0;
    if (!window_bounds<NSP>(g, c, lo, hi)) return;
    const int n = nsp_of<NSP>(g);
    for (int d = 0; d < n; ++d) i[d] = lo[d];
    const int64_t base = c[0] * xs.s[0] + c[1] * V * xs.s[1];
    const bool is_max = g.is_max();
    bool found[V], nan_done[V];
    int64_t first = -1;
#pragma unroll
    for (int k = 0; k < V; ++k) found[k] = nan_done[k] = false;
    do {
        int64_t off = base;
#pragma unroll
        for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d)
            if (d < n) off += i[d] * xs.s[d + 2];
        C v[V];
        load_c<T, V>(x + off, v);
        ++*count;
        if (is_max) {
            if (first < 0) first = window_local<NSP>(g, c, i);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (nan_done[k]) continue;
                if (v[k] != v[k]) {
                    if (g.propagate_nan) {
                        res[k] = v[k];
                        arg[k] = window_local<NSP>(g, c, i);
                        nan_done[k] = true;
                    }
                } else if (!found[k] || v[k] > res[k]) {
                    res[k] = v[k];
                    arg[k] = window_local<NSP>(g, c, i);
                    found[k] = true;
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) res[k] += v[k];
        }
    } while (next_in_window<NSP>(g, i, lo, hi));
    if (is_max)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (!found[k] && !nan_done[k]) {  // only NaNs
                res[k] = C(NAN);
                arg[k] = first;
            }
}

template <int NSP>
__device__ __forceinline__ double avg_divisor(const PoolGeom& g, const int64_t* c, int64_t count) {
    if (g.mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING) return static_cast<double>(count);
    double v = 1.0;
#pragma unroll
    for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d)
        if (d < nsp_of<NSP>(g)) v *= static_cast<double>(g.padded_extent(d, c[d + 2]));
    return v;
}

template <class T, int NSP, int V>
__global__ void __launch_bounds__(kThreads)
    pool_forward(PoolGeom g, Walk w, const T* __restrict__ x, St xs, T* y, St ys, int64_t total,
                 typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[kMaxNd];
        w.coords(static_cast<uint32_t>(t), c);
        C r[V];
        int64_t arg[V], count;
        window_reduce<T, NSP, V>(g, x, xs, c, r, arg, &count);
        if (!g.is_max()) {
            const double div = avg_divisor<NSP>(g, c, count);
#pragma unroll
            for (int k = 0; k < V; ++k) r[k] = div > 0 ? r[k] / static_cast<C>(div) : C(0);
        }
        T* yp = y + offset<NSP, V>(g, ys, c);
        C old[V];
        if (beta != C(0)) load_c<T, V>(yp, old);
#pragma unroll
        for (int k = 0; k < V; ++k) r[k] = alpha * r[k] + (beta != C(0) ? beta * old[k] : C(0));
        store_c<T, V>(yp, r);
    }
}

// Backward max, pass 1: the argmax of every window into a dense buffer (walk order of
// dy, V entries per position).
template <class T, int NSP, int V, class IdxT>
__global__ void __launch_bounds__(kThreads)
    pool_argmax(PoolGeom g, Walk w, const T* __restrict__ x, St xs, IdxT* idx, int64_t total, IdxT none) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[kMaxNd];
        w.coords(static_cast<uint32_t>(t), c);
        C r[V];
        int64_t arg[V], count;
        window_reduce<T, NSP, V>(g, x, xs, c, r, arg, &count);
#pragma unroll
        for (int k = 0; k < V; ++k) idx[t * V + k] = arg[k] < 0 ? none : static_cast<IdxT>(arg[k]);
    }
}

// Backward, one thread per dx element (V channels): gathers from every covering window.
template <class T, int NSP, int V, class IdxT, bool kMax>
__global__ void __launch_bounds__(kThreads)
    pool_backward(PoolGeom g, Walk wx, Walk wy, const T* __restrict__ dy, St dys, const IdxT* __restrict__ idx, T* dx,
                  St dxs, int64_t total, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[kMaxNd], o[kMaxNd], olo[kMaxNsp], ohi[kMaxNsp];
        wx.coords(static_cast<uint32_t>(t), c);
        const int n = nsp_of<NSP>(g);
        C acc[V];
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] = C(0);
        bool any = true;
        for (int d = 0; d < n; ++d) {
            core::pool_outputs_covering(g, d, c[d + 2], &olo[d], &ohi[d]);
            any = any && ohi[d] >= olo[d];
            o[d + 2] = olo[d];
        }
        o[0] = c[0];
        o[1] = c[1];
        while (any) {
            C dv[V];
            load_c<T, V>(dy + offset<NSP, V>(g, dys, o), dv);
            if constexpr (kMax) {
                int64_t in_pos[kMaxNsp];
                for (int d = 0; d < n; ++d) in_pos[d] = c[d + 2];
                const int64_t local = window_local<NSP>(g, o, in_pos);
                const int64_t pos = wy.dense_pos(o) * V;
#pragma unroll
                for (int k = 0; k < V; ++k)
                    if (static_cast<int64_t>(idx[pos + k]) == local) acc[k] += dv[k];
            } else {
                int64_t lo[kMaxNsp], hi[kMaxNsp];
                window_bounds<NSP>(g, o, lo, hi);
                int64_t count = 1;
                for (int d = 0; d < n; ++d) count *= hi[d] - lo[d];
                const double div = avg_divisor<NSP>(g, o, count);
                if (div > 0) {
                    const C inv = static_cast<C>(1.0 / div);
#pragma unroll
                    for (int k = 0; k < V; ++k) acc[k] += dv[k] * inv;
                }
            }
            int d = n - 1;
            while (d >= 0 && ++o[d + 2] > ohi[d]) {
                o[d + 2] = olo[d];
                --d;
            }
            if (d < 0) break;
        }
        T* xp = dx + offset<NSP, V>(g, dxs, c);
        C old[V];
        if (beta != C(0)) load_c<T, V>(xp, old);
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] = alpha * acc[k] + (beta != C(0) ? beta * old[k] : C(0));
        store_c<T, V>(xp, acc);
    }
}

// ---- 2-D fast paths (FLOAT / HALF / BFLOAT16) ----
//
// Geometry of a 2-D pooling with 32-bit index math (a legacy tensor addresses fewer than
// 2^31 elements). Strides in elements, in N, C, H, W order; any strides are correct, the
// walk order (channels innermost or W innermost) is chosen from y / dy for coalescing.
struct Pool2d {
    int n, c, h, w, oh, ow;
    int r, s, ph, pw, sh, sw;
    int mode;
    bool prop;
    uint32_t xs[4], ys[4], zs[4];  // fwd: x, y; bwd: x, dy, dx
};

Pool2d make_pool2d(const PoolGeom& g, const TensorDesc& x, const TensorDesc& y, const TensorDesc* z) {
    Pool2d p{};
    p.n = static_cast<int>(x.dims[0]);
    p.c = static_cast<int>(x.dims[1]);
    p.h = static_cast<int>(g.in[0]);
    p.w = static_cast<int>(g.in[1]);
    p.oh = static_cast<int>(g.out[0]);
    p.ow = static_cast<int>(g.out[1]);
    p.r = g.win[0];
    p.s = g.win[1];
    p.ph = g.pad[0];
    p.pw = g.pad[1];
    p.sh = g.stride[0];
    p.sw = g.stride[1];
    p.mode = g.mode;
    p.prop = g.propagate_nan;
    for (int i = 0; i < 4; ++i) {
        p.xs[i] = static_cast<uint32_t>(x.strides[i]);
        p.ys[i] = static_cast<uint32_t>(y.strides[i]);
        p.zs[i] = z ? static_cast<uint32_t>(z->strides[i]) : 0u;
    }
    return p;
}

// Max with the rules of window_reduce for one value in window order: ties keep the
// first, NaNs are skipped (a window of NaNs gives NaN); with propagation the first NaN
// wins. `best` starts as NaN.
__device__ __forceinline__ void max_step(float v, float& best, bool& nan_seen) {
    nan_seen |= v != v;
    best = (v > best || best != best) ? v : best;
}

// Forward, one thread per output (V channels when channels are innermost). R, S: the
// window when fixed at compile time (0: p.r, p.s). Bytes: x + y (+ y if beta != 0);
// neighbouring windows share inputs through L1.
template <class T, int V, bool kCInner, int R, int S>
__global__ void __launch_bounds__(kThreads)
    pool_fwd_2d(Pool2d p, FastDiv div_a, FastDiv div_b, FastDiv div_c, uint32_t total, const T* __restrict__ x,
                T* __restrict__ y, float alpha, float beta) {
    const int rr = R ? R : p.r, ss = S ? S : p.s;
    const bool is_max = p.mode == CUDNN_POOLING_MAX || p.mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        // Channels innermost: t = ((n * OH + oh) * OW + ow) * (C / V) + cv; else
        // t = ((n * C + c) * OH + oh) * OW + ow. div_a / div_b / div_c are the three inner extents.
        uint32_t q = div_a.div(t);
        const uint32_t i0 = t - q * div_a.d;
        uint32_t q2 = div_b.div(q);
        const uint32_t i1 = q - q2 * div_b.d;
        const uint32_t n = div_c.div(q2);
        const uint32_t i2 = q2 - n * div_c.d;
        uint32_t ch, oh, ow;
        if (kCInner) {
            ch = i0 * V, ow = i1, oh = i2;
        } else {
            ow = i0, oh = i1, ch = i2;
        }
        const int hs = static_cast<int>(oh) * p.sh - p.ph, ws = static_cast<int>(ow) * p.sw - p.pw;
        const T* xb = x + n * p.xs[0] + ch * p.xs[1];
        float best[V], sum[V];
        bool nan_seen[V];
#pragma unroll
        for (int k = 0; k < V; ++k) {
            best[k] = __int_as_float(0x7fffffff);
            sum[k] = 0.0f;
            nan_seen[k] = false;
        }
        int count = 0;
#pragma unroll
        for (int i = 0; i < rr; ++i) {
            const int ih = hs + i;
            if (ih < 0 || ih >= p.h) continue;
#pragma unroll
            for (int j = 0; j < ss; ++j) {
                const int iw = ws + j;
                if (iw < 0 || iw >= p.w) continue;
                float v[V];
                load_c<T, V>(xb + static_cast<uint32_t>(ih) * p.xs[2] + static_cast<uint32_t>(iw) * p.xs[3], v);
                ++count;
                if (is_max) {
#pragma unroll
                    for (int k = 0; k < V; ++k) max_step(v[k], best[k], nan_seen[k]);
                } else {
#pragma unroll
                    for (int k = 0; k < V; ++k) sum[k] += v[k];
                }
            }
        }
        float r[V];
        if (is_max) {
#pragma unroll
            for (int k = 0; k < V; ++k) r[k] = count == 0 ? 0.0f : (p.prop && nan_seen[k]) ? __int_as_float(0x7fffffff) : best[k];
        } else {
            int div = count;
            if (p.mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING) {
                // Window positions inside the padded input [-pad, in + pad).
                const int h_lo = max(hs, -p.ph), h_hi = min(hs + rr, p.h + p.ph);
                const int w_lo = max(ws, -p.pw), w_hi = min(ws + ss, p.w + p.pw);
                div = max(h_hi - h_lo, 0) * max(w_hi - w_lo, 0);
            }
#pragma unroll
            for (int k = 0; k < V; ++k) r[k] = div > 0 ? sum[k] / static_cast<float>(div) : 0.0f;
        }
        T* yp = y + n * p.ys[0] + ch * p.ys[1] + oh * p.ys[2] + ow * p.ys[3];
        float old[V];
        if (beta != 0.0f) load_c<T, V>(yp, old);
#pragma unroll
        for (int k = 0; k < V; ++k) r[k] = alpha * r[k] + (beta != 0.0f ? beta * old[k] : 0.0f);
        store_c<T, V>(yp, r);
    }
}

// Max backward, 2-D, windows of at most 255 positions: one block per (n, group of cg
// channels, band of bh dx rows). The block stages in shared memory the x rows its
// windows read and the dy of the outputs covering its rows, computes each window's
// argmax once (its position in the window, one byte), then each thread gathers its dx
// elements from the covering windows that chose them, in output order (as
// pool_backward: deterministic, no atomics). Bytes: x + dy + dx (+ dx if beta != 0),
// plus the halo rows of neighbouring bands (mostly L2 hits).
struct PoolBwdTile {
    Pool2d p;
    int cg, groups, bh, bands;
    uint32_t xcap, ocap;  // shared-memory elements of the x and dy tiles
    FastDiv div_cg, div_w, div_ow;
    uint32_t units;
};

constexpr uint8_t kNoArg = 255;

__device__ __forceinline__ int floor_div_i(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

template <class T>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_max_2d(PoolBwdTile t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx, float alpha,
                    float beta) {
    extern __shared__ __align__(16) unsigned char pool_smem[];
    T* xs = reinterpret_cast<T*>(pool_smem);  // [xrows][W][cg]
    T* ds = xs + t.xcap;                       // [orows][OW][cg]
    uint8_t* as = reinterpret_cast<uint8_t*>(ds + t.ocap);
    const Pool2d& p = t.p;
    const int cg = t.cg;
    for (uint32_t u = blockIdx.x; u < t.units; u += gridDim.x) {
        const int band = static_cast<int>(u % t.bands);
        const uint32_t q = u / t.bands;
        const int g = static_cast<int>(q % t.groups);
        const uint32_t n = q / t.groups;
        const int c0 = g * cg, cgn = min(cg, p.c - c0);
        const int ih0 = band * t.bh, ih1 = min(p.h, ih0 + t.bh);
        const int olo = max(0, -floor_div_i(-(ih0 + p.ph - p.r + 1), p.sh));
        const int ohi = min(p.oh - 1, floor_div_i(ih1 - 1 + p.ph, p.sh));
        const int orows = max(0, ohi - olo + 1);
        const int xh0 = max(0, olo * p.sh - p.ph);
        const int xrows = orows > 0 ? max(0, min(p.h, ohi * p.sh - p.ph + p.r) - xh0) : 0;
        const T* xb = x + n * p.xs[0] + static_cast<uint32_t>(c0) * p.xs[1];
        const T* db = dy + n * p.ys[0] + static_cast<uint32_t>(c0) * p.ys[1];
        // Stage x rows [xh0, xh0 + xrows) and dy rows [olo, olo + orows).
        const uint32_t nx = static_cast<uint32_t>(xrows) * p.w * cg;
#pragma unroll 4
        for (uint32_t l = threadIdx.x; l < nx; l += blockDim.x) {
            const uint32_t pix = t.div_cg.div(l), c = l - pix * cg;
            const uint32_t r = t.div_w.div(pix), w = pix - r * p.w;
            if (static_cast<int>(c) < cgn) xs[l] = xb[c * p.xs[1] + (xh0 + r) * p.xs[2] + w * p.xs[3]];
        }
        const uint32_t no = static_cast<uint32_t>(orows) * p.ow * cg;
#pragma unroll 4
        for (uint32_t l = threadIdx.x; l < no; l += blockDim.x) {
            const uint32_t pix = t.div_cg.div(l), c = l - pix * cg;
            const uint32_t r = t.div_ow.div(pix), w = pix - r * p.ow;
            if (static_cast<int>(c) < cgn) ds[l] = db[c * p.ys[1] + (olo + r) * p.ys[2] + w * p.ys[3]];
        }
        __syncthreads();
        // Argmax of every staged window (window_reduce's rules).
        for (uint32_t l = threadIdx.x; l < no; l += blockDim.x) {
            const uint32_t pix = t.div_cg.div(l), c = l - pix * cg;
            if (static_cast<int>(c) >= cgn) continue;
            const uint32_t r = t.div_ow.div(pix), ow = pix - r * p.ow;
            const int hs = (olo + static_cast<int>(r)) * p.sh - p.ph, ws = static_cast<int>(ow) * p.sw - p.pw;
            const int hlo = max(hs, 0), hhi = min(hs + p.r, p.h), wlo = max(ws, 0), whi = min(ws + p.s, p.w);
            int arg = kNoArg, first = kNoArg;
            bool found = false, nan_done = false;
            float best = 0.0f;
            for (int ih = hlo; ih < hhi && !nan_done; ++ih)
                for (int iw = wlo; iw < whi; ++iw) {
                    const float v = Io<T>::in(xs[((ih - xh0) * p.w + iw) * cg + c]);
                    const int local = (ih - hs) * p.s + (iw - ws);
                    if (first == kNoArg) first = local;
                    if (v != v) {
                        if (p.prop) {
                            arg = local;
                            nan_done = true;
                            break;
                        }
                    } else if (!found || v > best) {
                        best = v;
                        arg = local;
                        found = true;
                    }
                }
            if (!found && !nan_done) arg = first;  // only NaNs (kNoArg when the window is empty)
            as[l] = static_cast<uint8_t>(arg);
        }
        __syncthreads();
        // Gather: dx rows [ih0, ih1).
        T* xo = dx + n * p.zs[0] + static_cast<uint32_t>(c0) * p.zs[1];
        const uint32_t nd = static_cast<uint32_t>(ih1 - ih0) * p.w * cg;
        for (uint32_t l = threadIdx.x; l < nd; l += blockDim.x) {
            const uint32_t pix = t.div_cg.div(l), c = l - pix * cg;
            if (static_cast<int>(c) >= cgn) continue;
            const uint32_t r = t.div_w.div(pix), iw = pix - r * p.w;
            const int ih = ih0 + static_cast<int>(r);
            const int oh_lo = max(olo, -floor_div_i(-(ih + p.ph - p.r + 1), p.sh));
            const int oh_hi = min(ohi, floor_div_i(ih + p.ph, p.sh));
            const int ow_lo = max(0, -floor_div_i(-(static_cast<int>(iw) + p.pw - p.s + 1), p.sw));
            const int ow_hi = min(p.ow - 1, floor_div_i(static_cast<int>(iw) + p.pw, p.sw));
            float acc = 0.0f;
            for (int oh = oh_lo; oh <= oh_hi; ++oh)
                for (int ow = ow_lo; ow <= ow_hi; ++ow) {
                    const uint32_t li = ((oh - olo) * p.ow + ow) * cg + c;
                    const int local = (ih - (oh * p.sh - p.ph)) * p.s + (static_cast<int>(iw) - (ow * p.sw - p.pw));
                    if (as[li] == local) acc += Io<T>::in(ds[li]);
                }
            T* xp = xo + c * p.zs[1] + static_cast<uint32_t>(ih) * p.zs[2] + iw * p.zs[3];
            float r_out = alpha * acc;
            if (beta != 0.0f) r_out += beta * Io<T>::in(*xp);
            *xp = Io<T>::out(r_out);
        }
        __syncthreads();  // the tiles are reused by the next unit
    }
}

constexpr size_t kPoolTileSmem = 32 * 1024;

// The tiled max backward's plan; false when no band fits in shared memory.
template <class T>
bool plan_bwd_tile(const core::PoolingBwdProblem& pb, PoolBwdTile* t) {
    const PoolGeom& g = pb.g;
    t->p = make_pool2d(g, pb.x, pb.dy, &pb.dx);
    const Pool2d& p = t->p;
    // Channels innermost in x: groups of 32 bytes of channels (a DRAM sector per pixel).
    t->cg = pb.x.strides[1] == 1 && p.c > 1 ? std::min<int>(p.c, static_cast<int>(32 / sizeof(T))) : 1;
    t->groups = (p.c + t->cg - 1) / t->cg;
    auto need = [&](int bh, uint32_t* xcap, uint32_t* ocap) {
        const int orows = std::min(p.oh, (bh + p.r - 2) / p.sh + 1);
        const int xrows = std::min(p.h, (orows - 1) * p.sh + p.r);
        *xcap = static_cast<uint32_t>(xrows) * p.w * t->cg;
        *ocap = static_cast<uint32_t>(orows) * p.ow * t->cg;
        // The x tile's size rounds the dy tile to 16 bytes.
        *xcap = (*xcap * sizeof(T) + 15) / 16 * 16 / sizeof(T);
        return *xcap * sizeof(T) + *ocap * (sizeof(T) + 1);
    };
    int bh = std::min(p.h, 4096);
    uint32_t xcap = 0, ocap = 0;
    while (bh > 1 && need(bh, &xcap, &ocap) > kPoolTileSmem) --bh;
    if (need(bh, &xcap, &ocap) > kPoolTileSmem) return false;
    t->bh = bh;
    t->bands = (p.h + bh - 1) / bh;
    t->xcap = xcap;
    t->ocap = ocap;
    t->div_cg = FastDiv(static_cast<uint32_t>(t->cg));
    t->div_w = FastDiv(static_cast<uint32_t>(p.w));
    t->div_ow = FastDiv(static_cast<uint32_t>(p.ow));
    const int64_t units = static_cast<int64_t>(p.n) * t->groups * t->bands;
    if (units >= (int64_t{1} << 31)) return false;
    t->units = static_cast<uint32_t>(units);
    return true;
}


// Max backward, 2-D, the common windows fixed at compile time (3x3 and 2x2 at stride 2):
// dx is cut into tiles of SH x SW elements; one thread owns a column of tiles (V
// channels when channels are innermost) and walks down a strip of tile rows. The
// windows covering a tile are NWH x NWW consecutive outputs; at each step one new row
// of them has its argmax computed from x (window_reduce's rules; the argmax kept as an
// absolute position h * W + w) and its dy loaded, the rows above are carried in
// registers. Each tile element then gathers dy of the covering windows that chose it,
// in output order (deterministic, no atomics, no shared memory, no scratch).
// Bytes: x + dy + dx (+ dx if beta != 0); the x columns a neighbouring thread also
// reads hit L1, the rows shared with the strip below come from L2 once per strip.
// Loads per tile step: NWW * R * S x + NWW dy (3x3/2: 18 + 2 for 4 elements).
struct PoolBwdGather {
    Pool2d p;
    FastDiv div_a, div_b, div_c;  // inner extents of the thread index (see the kernel)
    int tcw, tch, rs;             // tile columns, tile rows, tile rows per strip
    uint32_t total;
};

__device__ __forceinline__ int ceil_div_i(int a, int b) { return -floor_div_i(-a, b); }

template <class T, int V, bool kCInner, int R, int S, int SH, int SW>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_max_gather(PoolBwdGather gp, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                        float alpha, float beta) {
    constexpr int TH = SH, TW = SW;
    constexpr int NWH = (TH + R - 2) / SH + 1, NWW = (TW + S - 2) / SW + 1;
    const Pool2d& p = gp.p;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < gp.total; t += gridDim.x * blockDim.x) {
        // Channels innermost: t = ((n * strips + strip) * TCW + tc) * (C / V) + cv; else
        // t = ((n * C + c) * strips + strip) * TCW + tc.
        const uint32_t q = gp.div_a.div(t);
        const uint32_t i0 = t - q * gp.div_a.d;
        const uint32_t q2 = gp.div_b.div(q);
        const uint32_t i1 = q - q2 * gp.div_b.d;
        const uint32_t n = gp.div_c.div(q2);
        const uint32_t i2 = q2 - n * gp.div_c.d;
        uint32_t ch, tc, strip;
        if (kCInner) {
            ch = i0 * V, tc = i1, strip = i2;
        } else {
            tc = i0, strip = i1, ch = i2;
        }
        const int iw0 = static_cast<int>(tc) * TW;
        const int ow_lo = ceil_div_i(iw0 + p.pw - S + 1, SW);
        const int tr0 = static_cast<int>(strip) * gp.rs, tr1 = min(gp.tch, tr0 + gp.rs);
        const T* xb = x + n * p.xs[0] + ch * p.xs[1];
        const T* db = dy + n * p.ys[0] + ch * p.ys[1];
        T* ob = dx + n * p.zs[0] + ch * p.zs[1];
        int arg[NWH][NWW][V];
        float dv[NWH][NWW][V];
        for (int tr = tr0; tr < tr1; ++tr) {
            const int ih0 = tr * TH;
            const int oh_lo = ceil_div_i(ih0 + p.ph - R + 1, SH);  // advances by one per step (TH == SH)
#pragma unroll
            for (int a = 0; a < NWH; ++a) {
                if (a < NWH - 1 && tr != tr0) {
#pragma unroll
                    for (int b = 0; b < NWW; ++b)
#pragma unroll
                        for (int k = 0; k < V; ++k) {
                            arg[a][b][k] = arg[a + 1][b][k];
                            dv[a][b][k] = dv[a + 1][b][k];
                        }
                    continue;
                }
                const int oh = oh_lo + a;
                const int hs = oh * SH - p.ph;
                const bool row_ok = oh >= 0 && oh < p.oh;
#pragma unroll
                for (int b = 0; b < NWW; ++b) {
                    const int ow = ow_lo + b;
                    const int ws = ow * SW - p.pw;
                    float best[V];
                    bool found[V], done[V];
                    int first = -1;
#pragma unroll
                    for (int k = 0; k < V; ++k) {
                        best[k] = 0.0f;
                        found[k] = done[k] = false;
                        arg[a][b][k] = -1;
                        dv[a][b][k] = 0.0f;
                    }
                    if (row_ok && ow >= 0 && ow < p.ow) {
                        load_c<T, V>(db + static_cast<uint32_t>(oh) * p.ys[2] + static_cast<uint32_t>(ow) * p.ys[3],
                                     dv[a][b]);
#pragma unroll
                        for (int i = 0; i < R; ++i) {
                            const int ih = hs + i;
                            if (ih < 0 || ih >= p.h) continue;
#pragma unroll
                            for (int j = 0; j < S; ++j) {
                                const int iw = ws + j;
                                if (iw < 0 || iw >= p.w) continue;
                                float v[V];
                                load_c<T, V>(
                                    xb + static_cast<uint32_t>(ih) * p.xs[2] + static_cast<uint32_t>(iw) * p.xs[3], v);
                                const int pos = ih * p.w + iw;
                                if (first < 0) first = pos;
#pragma unroll
                                for (int k = 0; k < V; ++k) {
                                    if (done[k]) continue;
                                    if (v[k] != v[k]) {
                                        if (p.prop) {
                                            arg[a][b][k] = pos;
                                            done[k] = true;
                                        }
                                    } else if (!found[k] || v[k] > best[k]) {
                                        best[k] = v[k];
                                        arg[a][b][k] = pos;
                                        found[k] = true;
                                    }
                                }
                            }
                        }
#pragma unroll
                        for (int k = 0; k < V; ++k)
                            if (!found[k] && !done[k]) arg[a][b][k] = first;  // only NaNs (-1: empty window)
                    }
                }
            }
            // Gather the tile's elements from the covering windows, in output order.
#pragma unroll
            for (int ti = 0; ti < TH; ++ti) {
                const int ih = ih0 + ti;
                if (ih >= p.h) continue;
#pragma unroll
                for (int tj = 0; tj < TW; ++tj) {
                    const int iw = iw0 + tj;
                    if (iw >= p.w) continue;
                    const int pos = ih * p.w + iw;
                    float acc[V];
#pragma unroll
                    for (int k = 0; k < V; ++k) acc[k] = 0.0f;
#pragma unroll
                    for (int a = 0; a < NWH; ++a)
#pragma unroll
                        for (int b = 0; b < NWW; ++b)
#pragma unroll
                            for (int k = 0; k < V; ++k)
                                if (arg[a][b][k] == pos) acc[k] += dv[a][b][k];
                    T* xp = ob + static_cast<uint32_t>(ih) * p.zs[2] + static_cast<uint32_t>(iw) * p.zs[3];
                    float old[V];
                    if (beta != 0.0f) load_c<T, V>(xp, old);
#pragma unroll
                    for (int k = 0; k < V; ++k) acc[k] = alpha * acc[k] + (beta != 0.0f ? beta * old[k] : 0.0f);
                    store_c<T, V>(xp, acc);
                }
            }
        }
    }
}

template <class T, int V, bool kCInner, int R, int S, int SH, int SW>
Status launch_bwd_gather(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    PoolBwdGather gp;
    gp.p = p;
    gp.tcw = (p.w + SW - 1) / SW;
    gp.tch = (p.h + SH - 1) / SH;
    const int64_t base = static_cast<int64_t>(p.n) * (p.c / V) * gp.tcw;
    if (base == 0 || gp.tch == 0) return Status::ok();
    // Strips of tile rows: about 2M threads, at least about four tile rows per strip (the
    // carried window rows reused; small problems walk the carry path too).
    int64_t strips = std::min<int64_t>(std::max(1, (gp.tch + 3) / 4),
                                       std::max<int64_t>(1, ((int64_t{1} << 21) + base - 1) / base));
    gp.rs = static_cast<int>((gp.tch + strips - 1) / strips);
    strips = (gp.tch + gp.rs - 1) / gp.rs;
    const int64_t total = base * strips;
    if (total >= (int64_t{1} << 32)) return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "pooling too large");
    gp.total = static_cast<uint32_t>(total);
    gp.div_a = FastDiv(static_cast<uint32_t>(kCInner ? p.c / V : gp.tcw));
    gp.div_b = FastDiv(static_cast<uint32_t>(kCInner ? gp.tcw : strips));
    gp.div_c = FastDiv(static_cast<uint32_t>(kCInner ? strips : p.c));
    pool_bwd_max_gather<T, V, kCInner, R, S, SH, SW><<<grid_for(total), kThreads, 0, h.stream>>>(
        gp, static_cast<const T*>(pb.x_data), static_cast<const T*>(pb.dy_data), static_cast<T*>(pb.dx_data),
        static_cast<float>(pb.out.alpha), static_cast<float>(pb.out.beta));
    return launched("cuda_pooling_bwd");
}

template <class T, int R, int S, int SH, int SW>
Status bwd_gather_layout(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    constexpr int kV = 8 / sizeof(T);  // 8-byte vectors: two 128-byte lines per warp access
    const bool c_inner = pb.dx.strides[1] == 1 && p.c > 1;
    if (!c_inner) return launch_bwd_gather<T, 1, false, R, S, SH, SW>(h, pb, p);
    bool vec = p.c % kV == 0 && aligned_to(pb.x_data, sizeof(T) * kV) && aligned_to(pb.dy_data, sizeof(T) * kV) &&
               aligned_to(pb.dx_data, sizeof(T) * kV);
    for (const TensorDesc* t : {&pb.x, &pb.dy, &pb.dx}) {
        vec = vec && t->strides[1] == 1;
        for (int i = 0; i < 4; ++i)
            if (i != 1) vec = vec && t->strides[i] % kV == 0;
    }
    if (vec) return launch_bwd_gather<T, kV, true, R, S, SH, SW>(h, pb, p);
    return launch_bwd_gather<T, 1, true, R, S, SH, SW>(h, pb, p);
}

// The gather kernel's window (3 for 3x3, 2 for 2x2, both at stride 2); 0: not taken.
inline int gather_window(const core::PoolingBwdProblem& pb) {
    const PoolGeom& g = pb.g;
    if (!g.is_max() || g.nsp != 2 || g.stride[0] != 2 || g.stride[1] != 2 || g.win[0] != g.win[1]) return 0;
    return g.win[0] == 3 || g.win[0] == 2 ? g.win[0] : 0;
}

template <class T>
Status bwd_gather(const core::Handle& h, const core::PoolingBwdProblem& pb, int win) {
    const Pool2d p = make_pool2d(pb.g, pb.x, pb.dy, &pb.dx);
    if (win == 3) return bwd_gather_layout<T, 3, 3, 2, 2>(h, pb, p);
    return bwd_gather_layout<T, 2, 2, 2, 2>(h, pb, p);
}

template <class T>
constexpr bool kFastPoolType =
    std::is_same<T, float>::value || std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value;

template <class F>
Status with_pool_type(cudnnDataType_t dt, F&& f) {
    if (dt == CUDNN_DATA_INT8) return f(Tag<int8_t>{});
    return with_float_type(dt, std::forward<F>(f));
}

// V channels per thread when every tensor keeps channels innermost (stride 1), C and
// every other stride are multiples of V, and the pointers are aligned.
template <class T>
int channel_vec(std::initializer_list<const TensorDesc*> ts, std::initializer_list<const void*> ptrs) {
    constexpr int kV = Io<T>::kVec;
    for (const TensorDesc* t : ts) {
        if (t->strides[1] != 1 || t->dims[1] % kV != 0) return 1;
        for (int i = 0; i < t->nb_dims; ++i)
            if (i != 1 && t->strides[i] % kV != 0) return 1;
    }
    for (const void* p : ptrs)
        if (!aligned_to(p, sizeof(T) * kV)) return 1;
    return kV;
}

// Calls f(std::integral_constant NSP, std::integral_constant V).
template <int V, class F>
Status with_nsp(int nsp, F&& f) {
    if (nsp == 2) return f(std::integral_constant<int, 2>{}, std::integral_constant<int, V>{});
    if (nsp == 3) return f(std::integral_constant<int, 3>{}, std::integral_constant<int, V>{});
    return f(std::integral_constant<int, 0>{}, std::integral_constant<int, V>{});
}

template <class T, class F>
Status with_shape(int nsp, int v, F&& f) {
    if (v == Io<T>::kVec && v > 1) return with_nsp<Io<T>::kVec>(nsp, std::forward<F>(f));
    return with_nsp<1>(nsp, std::forward<F>(f));
}

// Forward 2-D: walk y in memory order (channels innermost: V channels per thread when
// channel_vec allows), the common windows compiled with a fixed size.
template <class T, int V, bool kCInner>
Status launch_fwd_2d(const core::Handle& h, const core::PoolingFwdProblem& pf, const Pool2d& p) {
    const uint32_t total = static_cast<uint32_t>(static_cast<int64_t>(p.n) * p.c * p.oh * p.ow / V);
    const FastDiv a(static_cast<uint32_t>(kCInner ? p.c / V : p.ow));
    const FastDiv b(static_cast<uint32_t>(kCInner ? p.ow : p.oh));
    const FastDiv c(static_cast<uint32_t>(kCInner ? p.oh : p.c));
    const T* x = static_cast<const T*>(pf.x_data);
    T* y = static_cast<T*>(pf.y_data);
    const float alpha = static_cast<float>(pf.out.alpha), beta = static_cast<float>(pf.out.beta);
    const unsigned grid = grid_for(total);
    if (p.r == 3 && p.s == 3)
        pool_fwd_2d<T, V, kCInner, 3, 3><<<grid, kThreads, 0, h.stream>>>(p, a, b, c, total, x, y, alpha, beta);
    else if (p.r == 2 && p.s == 2)
        pool_fwd_2d<T, V, kCInner, 2, 2><<<grid, kThreads, 0, h.stream>>>(p, a, b, c, total, x, y, alpha, beta);
    else
        pool_fwd_2d<T, V, kCInner, 0, 0><<<grid, kThreads, 0, h.stream>>>(p, a, b, c, total, x, y, alpha, beta);
    return launched("cuda_pooling_fwd");
}

template <class T>
Status fwd_2d(const core::Handle& h, const core::PoolingFwdProblem& pf) {
    const Pool2d p = make_pool2d(pf.g, pf.x, pf.y, nullptr);
    if (static_cast<int64_t>(p.n) * p.c * p.oh * p.ow == 0) return Status::ok();
    const bool c_inner = pf.y.strides[1] == 1 && p.c > 1;
    if (!c_inner) return launch_fwd_2d<T, 1, false>(h, pf, p);
    if (channel_vec<T>({&pf.x, &pf.y}, {pf.x_data, pf.y_data}) > 1)
        return launch_fwd_2d<T, Io<T>::kVec, true>(h, pf, p);
    return launch_fwd_2d<T, 1, true>(h, pf, p);
}

class CudaPoolingFwd final : public core::Impl<core::PoolingFwdProblem> {
public:
    const char* name() const override { return "cuda_pooling_fwd"; }
    Status execute(const core::Handle& h, const core::PoolingFwdProblem& p) const override {
        return with_pool_type(p.y.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            if constexpr (kFastPoolType<T>)
                if (p.g.nsp == 2) return fwd_2d<T>(h, p);
            const int v = channel_vec<T>({&p.x, &p.y}, {p.x_data, p.y_data});
            return with_shape<T>(p.g.nsp, v, [&](auto nsp, auto vv) -> Status {
                constexpr int NSP = decltype(nsp)::value, V = decltype(vv)::value;
                const Walk w = make_walk(p.y, V);
                const int64_t total = walk_total(w);
                pool_forward<T, NSP, V><<<grid_for(total), kThreads, 0, h.stream>>>(
                    p.g, w, static_cast<const T*>(p.x_data), strides_of(p.x), static_cast<T*>(p.y_data),
                    strides_of(p.y), total, static_cast<C>(p.out.alpha), static_cast<C>(p.out.beta));
                return launched(name());
            });
        });
    }
};

class CudaPoolingBwd final : public core::Impl<core::PoolingBwdProblem> {
public:
    const char* name() const override { return "cuda_pooling_bwd"; }
    Status execute(const core::Handle& h, const core::PoolingBwdProblem& p) const override {
        return with_float_type(p.dx.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            if constexpr (kFastPoolType<T>) {
                if (const int win = gather_window(p)) return bwd_gather<T>(h, p, win);
                PoolBwdTile t;
                if (p.g.is_max() && p.g.nsp == 2 && p.g.window_size() <= 255 && plan_bwd_tile<T>(p, &t)) {
                    if (t.units == 0) return Status::ok();
                    const size_t smem = t.xcap * sizeof(T) + t.ocap * (sizeof(T) + 1);
                    pool_bwd_max_2d<T><<<std::min<uint32_t>(t.units, 1u << 20), kThreads, smem, h.stream>>>(
                        t, static_cast<const T*>(p.x_data), static_cast<const T*>(p.dy_data),
                        static_cast<T*>(p.dx_data), static_cast<float>(p.out.alpha), static_cast<float>(p.out.beta));
                    return launched(name());
                }
            }
            const bool small = p.g.window_size() <= 254;
            const int v = small ? channel_vec<T>({&p.x, &p.dx, &p.dy}, {p.x_data, p.dx_data, p.dy_data}) : 1;
            return with_shape<T>(p.g.nsp, v, [&](auto nsp, auto vv) -> Status {
                constexpr int NSP = decltype(nsp)::value, V = decltype(vv)::value;
                if constexpr (V > 1) return run<T, NSP, V, uint8_t>(h, p);
                return small ? run<T, NSP, 1, uint8_t>(h, p) : run<T, NSP, 1, int32_t>(h, p);
            });
        });
    }

private:
    template <class T, int NSP, int V, class IdxT>
    Status run(const core::Handle& h, const core::PoolingBwdProblem& p) const {
        using C = typename Io<T>::C;
        const Walk wx = make_walk(p.dx, V), wy = make_walk(p.dy, V);
        const int64_t ny = walk_total(wy), nx = walk_total(wx);
        const C alpha = static_cast<C>(p.out.alpha), beta = static_cast<C>(p.out.beta);
        const T* dy = static_cast<const T*>(p.dy_data);
        T* dx = static_cast<T*>(p.dx_data);
        if (!p.g.is_max()) {
            pool_backward<T, NSP, V, IdxT, false><<<grid_for(nx), kThreads, 0, h.stream>>>(
                p.g, wx, wy, dy, strides_of(p.dy), nullptr, dx, strides_of(p.dx), nx, alpha, beta);
            return launched(name());
        }
        DeviceScratch scratch;
        ODNN_RETURN_IF_ERROR(scratch.allocate(static_cast<size_t>(ny) * V * sizeof(IdxT), h.stream));
        IdxT* idx = static_cast<IdxT*>(scratch.get());
        const IdxT none = static_cast<IdxT>(-1);
        pool_argmax<T, NSP, V, IdxT><<<grid_for(ny), kThreads, 0, h.stream>>>(
            p.g, wy, static_cast<const T*>(p.x_data), strides_of(p.x), idx, ny, none);
        pool_backward<T, NSP, V, IdxT, true><<<grid_for(nx), kThreads, 0, h.stream>>>(
            p.g, wx, wy, dy, strides_of(p.dy), idx, dx, strides_of(p.dx), nx, alpha, beta);
        return launched(name());
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::PoolingFwdProblem, CudaPoolingFwd, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::PoolingBwdProblem, CudaPoolingBwd, core::kPriorityGeneric);

}  // namespace odnn::cuda
