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
// 2-D pooling on FLOAT / HALF / BFLOAT16 takes the fast paths below (any strides, 32-bit
// index math; the thread order follows the layout, W or C innermost):
//   forward, 3x3 / 2x2 at stride 2   pool_fwd_cols: KH outputs down a column a thread,
//                                    the input rows shared by its windows reduced once;
//   forward, other windows           pool_fwd_2d: one output a thread;
//   max backward, 3x3 / 2x2 at       pool_bwd_planes (FLOAT, W innermost, NaNs skipped:
//   stride 2                         bands of a plane in shared memory, each window's dy
//                                    added at its argmax), pool_bwd_strips (W innermost
//                                    otherwise: warps walk strips of cells, neighbours'
//                                    windows by shuffles) and pool_bwd_cells (C innermost:
//                                    blocks of cells through shared memory); every
//                                    window's argmax computed once;
//   max backward, other windows      pool_bwd_max_2d (bands of rows in shared memory).
// HALF / BFLOAT16 max with W innermost and even W (3x3 / 2x2 at stride 2) take the pair
// kernels pool_fwd_pairs / pool_bwd_pairs (two output columns a lane, packed 16-bit max;
// the backward only when NaNs are skipped; before it pool_bwd_walk16 (sm_90: planes
// copied in bulk, lanes walking window-pair columns; 3x3 at pad 1 and 2x2 at pad 0, W a
// multiple of 8 up to 128), then pool_bwd_stream16, whole planes through a cp.async
// pipeline where rows and dy planes copy in 4-byte words, and pool_bwd_planes16, bands
// with packed window pairs, opt-in); with C innermost, C a
// multiple of 8 and NaNs skipped, pool_bwd_cells takes 8 channels a thread in packed pairs (window_argmax8,
// cell_gather8); pool_fwd_cols reduces a 16-bit max over channel vectors in packed pairs
// (PairLanes). The kernels above remain for 1-D and 3-D+,
// DOUBLE, INT8, average backward and windows over 255 positions.
//
// Ceilings at 128x256x56x56, 3x3 window, stride 2, pad 1 (y 128x256x28x28), 4.2 TB/s:
//   forward       x + y           f32 514 MB -> 0.122 ms, bf16 257 MB -> 0.061 ms
//   backward max  x + dy + dx     f32 925 MB -> 0.220 ms, bf16 462 MB -> 0.110 ms
//                 (the bench also counts y: 2x + 2y, so the ceiling reads 111% of copy)
// Every kernel here started instruction-bound, not memory-bound (Nsight Compute: SM
// 67-85%, DRAM 10-41%); what it took, in docs/PERFORMANCE.md: 64-bit address arithmetic
// (a pointer plus 64-bit element offsets costs 4-5 instructions a load; a plane-relative
// 32-bit byte offset 2), per-position bounds branches (clamped addresses and a masked
// value instead), and recomputing a window's argmax for every element it covers (once a
// window now; the argmax as the fmaxf max and the first position equal to it).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/cuda_runtime.hpp"
#include "core/elem_access.hpp"
#include "core/knob.hpp"
#include "core/pool_problem.hpp"
#include "cuda/async_copy.cuh"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"
#include "cuda/sm90_async.cuh"

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

    // Every index below is a constant once unrolled: stored through `order` (a run-time
    // index), the coordinates went to local memory in every thread.
    __device__ __forceinline__ void coords(uint32_t t, int64_t* c) const {
        uint32_t q[kMaxNd] = {};
#pragma unroll
        for (int k = kMaxNd - 1; k >= 0; --k) {
            if (k >= nd) continue;
            const uint32_t next = div[k].div(t);
            q[k] = t - next * size[k];
            t = next;
        }
#pragma unroll
        for (int i = 0; i < kMaxNd; ++i) {
            int64_t v = 0;
#pragma unroll
            for (int k = 0; k < kMaxNd; ++k)
                if (k < nd && order[k] == i) v = q[k];
            c[i] = v;
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

// t = ((n * c.d + i2) * b.d + i1) * a.d + i0, split.
__device__ __forceinline__ void split4(uint32_t t, const FastDiv& a, const FastDiv& b, const FastDiv& c, uint32_t* n,
                                       uint32_t* i2, uint32_t* i1, uint32_t* i0) {
    const uint32_t q = a.div(t);
    *i0 = t - q * a.d;
    const uint32_t q2 = b.div(q);
    *i1 = q - q2 * b.d;
    *n = c.div(q2);
    *i2 = q2 - *n * c.d;
}

// Output coordinates of thread index t in the 2-D forward kernels' layout order: channels
// innermost, t = ((n * ROWS + row) * OW + ow) * (C / V) + cv; else t = ((n * C + c) * ROWS +
// row) * OW + ow. ROWS: output rows (pool_fwd_2d) or blocks of rows (pool_fwd_cols).
template <int V, bool kCInner>
__device__ __forceinline__ void out_coords(uint32_t t, const FastDiv& a, const FastDiv& b, const FastDiv& c,
                                           uint32_t* n, uint32_t* ch, uint32_t* row, uint32_t* ow) {
    uint32_t i2, i1, i0;
    split4(t, a, b, c, n, &i2, &i1, &i0);
    if (kCInner) {
        *ch = i0 * V, *ow = i1, *row = i2;
    } else {
        *ow = i0, *row = i1, *ch = i2;
    }
}

// p[k] = alpha * r[k] + beta * p[k] for V channels (p not read when beta == 0).
template <class T, int V>
__device__ __forceinline__ void blend_store(T* p, float* r, float alpha, float beta) {
    float old[V];
    if (beta != 0.0f) load_c<T, V>(p, old);
#pragma unroll
    for (int k = 0; k < V; ++k) r[k] = alpha * r[k] + (beta != 0.0f ? beta * old[k] : 0.0f);
    store_c<T, V>(p, r);
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
#pragma unroll
    for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d) i[d] = d < n ? lo[d] : 0;
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
            // The position once for all V channels: computed in each channel's branches, the
            // N-D (NSP = 0) instance with V = 8 unrolled it 16 times (255 registers, 2.6 KB
            // of spills).
            const int64_t here = window_local<NSP>(g, c, i);
            if (first < 0) first = here;
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (nan_done[k]) continue;
                if (v[k] != v[k]) {
                    if (g.propagate_nan) {
                        res[k] = v[k];
                        arg[k] = here;
                        nan_done[k] = true;
                    }
                } else if (!found[k] || v[k] > res[k]) {
                    res[k] = v[k];
                    arg[k] = here;
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
__global__ void __launch_bounds__(kThreads, NSP ? 3 : 1)  // 2-D, 3-D: <= 85 registers
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
#pragma unroll
        for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d) {
            olo[d] = ohi[d] = o[d + 2] = 0;
            if (d >= n) continue;
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
#pragma unroll
                for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d) in_pos[d] = c[d + 2];
                const int64_t local = window_local<NSP>(g, o, in_pos);
                const int64_t pos = wy.dense_pos(o) * V;
#pragma unroll
                for (int k = 0; k < V; ++k)
                    if (static_cast<int64_t>(idx[pos + k]) == local) acc[k] += dv[k];
            } else {
                int64_t lo[kMaxNsp], hi[kMaxNsp];
                window_bounds<NSP>(g, o, lo, hi);
                int64_t count = 1;
#pragma unroll
                for (int d = 0; d < (NSP ? NSP : kMaxNsp); ++d)
                    if (d < n) count *= hi[d] - lo[d];
                const double div = avg_divisor<NSP>(g, o, count);
                if (div > 0) {
                    const C inv = static_cast<C>(1.0 / div);
#pragma unroll
                    for (int k = 0; k < V; ++k) acc[k] += dv[k] * inv;
                }
            }
            // The next covering output, the last dim fastest; done when every dim wrapped.
            bool wrapped = true;
#pragma unroll
            for (int d = (NSP ? NSP : kMaxNsp) - 1; d >= 0; --d) {
                if (d >= n || !wrapped) continue;
                wrapped = ++o[d + 2] > ohi[d];
                if (wrapped) o[d + 2] = olo[d];
            }
            if (wrapped) break;
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
    bool plane32;                  // every (h, w) plane spans fewer than 2^32 bytes
};

// In-plane byte offsets of the column-tiled kernels are 32-bit.
inline bool plane_fits_32(const TensorDesc& t) {
    const uint64_t span = (static_cast<uint64_t>(t.dims[2] - 1) * static_cast<uint64_t>(t.strides[2]) +
                           static_cast<uint64_t>(t.dims[3] - 1) * static_cast<uint64_t>(t.strides[3]) + 1) *
                          static_cast<uint64_t>(core::dtype_bits(t.dtype) / 8);
    return span < (uint64_t{1} << 32);
}

// The window the column (forward) and cell (max backward) kernels are compiled for: 3
// for 3x3, 2 for 2x2, both at stride 2, in planes whose byte offsets fit 32 bits; 0: none.
inline int fixed_window(const Pool2d& p) {
    if (!p.plane32 || p.sh != 2 || p.sw != 2 || p.r != p.s) return 0;
    return p.r == 3 || p.r == 2 ? p.r : 0;
}

// base + a byte offset, as T*.
template <class T>
__device__ __forceinline__ const T* at_bytes(const char* base, uint32_t off) {
    return reinterpret_cast<const T*>(base + off);
}

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
    p.plane32 = plane_fits_32(x) && plane_fits_32(y) && (!z || plane_fits_32(*z));
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
        uint32_t n, ch, oh, ow;
        out_coords<V, kCInner>(t, div_a, div_b, div_c, &n, &ch, &oh, &ow);
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
        blend_store<T, V>(yp, r, alpha, beta);
    }
}

// NaN-propagating max (max.NaN: a NaN operand gives NaN).
__device__ __forceinline__ float fmax_nan(float a, float b) {
#if __CUDA_ARCH__ >= 800
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    return (a != a || b != b) ? __int_as_float(0x7fffffff) : fmaxf(a, b);
#endif
}

// Packed pairs of 16-bit values (the pair kernels below; pool_fwd_cols' 16-bit max).
template <class T>
struct Half2Of;
template <>
struct Half2Of<__half> {
    using type = __half2;
    static constexpr uint32_t kNan = 0x7e007e00u;     // OR'ed into a pair: both halves NaN
    static constexpr uint32_t kNegInf = 0xfc00fc00u;
    static constexpr uint32_t kOne = 0x3c00u;         // 1.0, one half
};
template <>
struct Half2Of<__nv_bfloat16> {
    using type = __nv_bfloat162;
    static constexpr uint32_t kNan = 0x7fc07fc0u;
    static constexpr uint32_t kNegInf = 0xff80ff80u;
    static constexpr uint32_t kOne = 0x3f80u;
};

template <class T>
__device__ __forceinline__ typename Half2Of<T>::type to_h2(uint32_t u) {
    typename Half2Of<T>::type h;
    memcpy(&h, &u, sizeof(u));
    return h;
}
template <class T>
__device__ __forceinline__ uint32_t from_h2(typename Half2Of<T>::type h) {
    uint32_t u;
    memcpy(&u, &h, sizeof(u));
    return u;
}
// Per half: the max skipping NaNs (fmaxf's rule; two NaNs give NaN) or propagating them.
template <class T, bool kNan>
__device__ __forceinline__ uint32_t max2(uint32_t a, uint32_t b) {
    if constexpr (kNan)
        return from_h2<T>(__hmax2_nan(to_h2<T>(a), to_h2<T>(b)));
    else
        return from_h2<T>(__hmax2(to_h2<T>(a), to_h2<T>(b)));
}
// Per half: 0xffff where a == b (IEEE: NaN never equal, -0 == +0), else 0.
template <class T>
__device__ __forceinline__ uint32_t eq2_mask(uint32_t a, uint32_t b) {
    return __heq2_mask(to_h2<T>(a), to_h2<T>(b));
}
// The low / high half as float. BFLOAT16 is the top half of a float: one shift or AND
// (__high2float takes a PRMT and a shift).
template <class T>
__device__ __forceinline__ float lo_f(uint32_t u) {
    if constexpr (std::is_same<T, __half>::value)
        return __low2float(to_h2<T>(u));
    else
        return __uint_as_float(u << 16);
}
template <class T>
__device__ __forceinline__ float hi_f(uint32_t u) {
    if constexpr (std::is_same<T, __half>::value)
        return __high2float(to_h2<T>(u));
    else
        return __uint_as_float(u & 0xffff0000u);
}
// Two floats rounded to nearest even (as Io<T>::out), packed lo, hi.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (std::is_same<T, __half>::value)
        return from_h2<T>(__floats2half2_rn(lo, hi));
    else
        return from_h2<T>(__floats2bfloat162_rn(lo, hi));
}
// The aligned pair of 16-bit elements at p = alpha * (lo, hi) + beta * p, blend_store's
// arithmetic element by element (p not read when beta == 0), the pair rounded by one
// packed conversion. (blend_store<T, 2> / <T, 4> compute the same values with per-element
// conversions and a different instruction mix; the pair kernels were measured with these.)
template <class T>
__device__ __forceinline__ void blend_pair(char* p, float lo, float hi, float alpha, float beta) {
    float o0 = 0.0f, o1 = 0.0f;
    if (beta != 0.0f) {
        const uint32_t u = *reinterpret_cast<const uint32_t*>(p);
        o0 = lo_f<T>(u);
        o1 = hi_f<T>(u);
    }
    lo = alpha * lo + (beta != 0.0f ? beta * o0 : 0.0f);
    hi = alpha * hi + (beta != 0.0f ? beta * o1 : 0.0f);
    *reinterpret_cast<uint32_t*>(p) = pack2<T>(lo, hi);
}
// The same for the aligned 4 elements at p (8 bytes), v in order.
template <class T>
__device__ __forceinline__ void blend_quad(char* p, float (&v)[4], float alpha, float beta) {
    uint2 o = make_uint2(0u, 0u);
    if (beta != 0.0f) o = *reinterpret_cast<const uint2*>(p);
    const float old[4] = {lo_f<T>(o.x), hi_f<T>(o.x), lo_f<T>(o.y), hi_f<T>(o.y)};
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = alpha * v[k] + (beta != 0.0f ? beta * old[k] : 0.0f);
    *reinterpret_cast<uint2*>(p) = make_uint2(pack2<T>(v[0], v[1]), pack2<T>(v[2], v[3]));
}
// The low (H = 0) or high (H = 1) halves of a and b, as (a.H, b.H): one PRMT.
template <int H>
__device__ __forceinline__ uint32_t halves(uint32_t a, uint32_t b) {
    return __byte_perm(a, b, H ? 0x7632 : 0x5410);
}
__device__ __forceinline__ uint32_t ld_u32(const char* p) { return *reinterpret_cast<const uint32_t*>(p); }
// v, hidden from the optimizer: a lane's loop-invariant values pass through it so that they
// stay in registers instead of being recomputed every row (NVVM sinks them into the loop).
__device__ __forceinline__ uint32_t opaque(uint32_t v) {
    asm volatile("" : "+r"(v));
    return v;
}

enum class FwdOp { kMax, kMaxNan, kAvg };  // max skipping NaNs, max propagating them, average

// How pool_fwd_cols reduces a window position's V channels. FloatLanes: V floats, the
// filler and operation of kOp. PairLanes (16-bit max with channels innermost, V even): V / 2
// packed pairs reduced by max.{bf16x2,f16x2} (fmaxf's / max.NaN's rule per half, exact: the
// max of 16-bit values is one of them), so a 16-byte load costs 4 selects and 4 max
// instructions as FLOAT's does, not 8 conversions, 8 selects and 8 fmaxf (bf16 NHWC
// 128x256x56x56 ran at 79% of copy that way, FLOAT at 91%).
template <class T, int V, FwdOp kOp>
struct FloatLanes {
    using E = float;
    static constexpr int N = V;
    __device__ float fill() const {
        return kOp == FwdOp::kMax ? __int_as_float(0x7fffffff) : (kOp == FwdOp::kMaxNan ? -INFINITY : 0.0f);
    }
    __device__ void load(const char* p, float (&v)[N]) const { load_c<T, V>(reinterpret_cast<const T*>(p), v); }
    __device__ float operator()(float a, float b) const {
        return kOp == FwdOp::kMax ? fmaxf(a, b) : (kOp == FwdOp::kMaxNan ? fmax_nan(a, b) : a + b);
    }
};
template <class T, int V, bool kNan>
struct PairLanes {
    using E = uint32_t;
    static constexpr int N = V / 2;
    __device__ uint32_t fill() const { return kNan ? Half2Of<T>::kNegInf : Half2Of<T>::kNan; }
    __device__ void load(const char* p, uint32_t (&v)[N]) const {
        const Vec<T, V> u = load_vec<T, V>(reinterpret_cast<const T*>(p));
        memcpy(v, &u, sizeof(v));
    }
    __device__ uint32_t operator()(uint32_t a, uint32_t b) const { return max2<T, kNan>(a, b); }
};

// The NR input rows from hs of a column of windows, each reduced over its S columns (col,
// cok: byte offsets and whether in range) by L; rows and columns out of range give L's
// filler. rok[r]: whether row r is in range.
template <class L, int NR, int S>
__device__ __forceinline__ void reduce_rows(const L& l, const Pool2d& p, const char* xc, uint32_t xs2,
                                            const uint32_t (&col)[S], const bool (&cok)[S], int hs,
                                            typename L::E (&acc)[NR][L::N], bool (&rok)[NR]) {
#pragma unroll
    for (int r = 0; r < NR; ++r) {
        const int ih = hs + r;
        rok[r] = ih >= 0 && ih < p.h;
        const char* xr = xc + (rok[r] ? static_cast<uint32_t>(ih) : 0u) * xs2;
#pragma unroll
        for (int j = 0; j < S; ++j) {
            typename L::E v[L::N];
            l.load(xr + col[j], v);
#pragma unroll
            for (int k = 0; k < L::N; ++k) {
                const typename L::E m = cok[j] ? v[k] : l.fill();
                acc[r][k] = j == 0 ? m : l(acc[r][k], m);
            }
        }
#pragma unroll
        for (int k = 0; k < L::N; ++k) acc[r][k] = rok[r] ? acc[r][k] : l.fill();
    }
}

// Lane k of the window over rows r0 .. r0 + R - 1 of acc.
template <int R, class L, int NR>
__device__ __forceinline__ typename L::E reduce_window(const L& l, const typename L::E (&acc)[NR][L::N], int r0,
                                                       int k) {
    typename L::E m = acc[r0][k];
#pragma unroll
    for (int i = 1; i < R; ++i) m = l(m, acc[r0 + i][k]);
    return m;
}

// Forward, 2-D, windows R x S at strides SH x SW fixed at compile time (3x3/2, 2x2/2):
// one thread computes KH outputs down a column (V channels when channels are innermost).
// Each of the (KH - 1) * SH + R input rows it reads is reduced over its S columns once
// and shared by the windows that overlap it (3x3/2, KH = 4: 27 loads for 4 outputs
// against 36; KH = 2 for vector threads, whose rows take V registers each).
// Out-of-range positions read a clamped address and count as a filler (NaN for max,
// which fmaxf skips; -inf for NaN-propagating max; 0 for sums), so a warp holding border
// threads runs one straight path. Max skipping NaNs is fmaxf from a NaN start (a window
// of NaNs gives NaN), propagating ones max.NaN; both agree with window_reduce's value
// (the argmax order matters only to backward).
// Bytes: x + y (+ y if beta != 0); rows shared with the next thread's outputs hit L2.
template <class T, int V, bool kCInner, FwdOp kOp, int R, int S, int SH, int SW, int KH>
__global__ void __launch_bounds__(kThreads, 4)  // <= 64 registers: 4 blocks an SM (66 measured 16% slower)
    pool_fwd_cols(Pool2d p, FastDiv div_a, FastDiv div_b, FastDiv div_c, uint32_t total, const T* __restrict__ x,
                  T* __restrict__ y, float alpha, float beta) {
    constexpr int NR = (KH - 1) * SH + R;
    constexpr bool kPacked = sizeof(T) == 2 && kOp != FwdOp::kAvg && V % 2 == 0;
    using L = std::conditional_t<kPacked, PairLanes<T, V, kOp == FwdOp::kMaxNan>, FloatLanes<T, V, kOp>>;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        uint32_t n, ch, ohb, ow;  // ohb: block of KH output rows
        out_coords<V, kCInner>(t, div_a, div_b, div_c, &n, &ch, &ohb, &ow);
        const int oh0 = static_cast<int>(ohb) * KH;
        const int hs = oh0 * SH - p.ph, ws = static_cast<int>(ow) * SW - p.pw;
        const T* xb = x + n * p.xs[0] + ch * p.xs[1];
        // Out-of-range rows and columns read a clamped in-range address and are replaced
        // by the filler: no predicated loads, so no predicate juggling.
        const char* xc = reinterpret_cast<const char*>(xb);
        uint32_t col[S];  // byte offsets in the plane (plane32)
        bool cok[S];
        int ncols = 0;
#pragma unroll
        for (int j = 0; j < S; ++j) {
            const int iw = ws + j;
            cok[j] = iw >= 0 && iw < p.w;
            ncols += cok[j];
            col[j] = (cok[j] ? static_cast<uint32_t>(iw) : 0u) * (p.xs[3] * static_cast<uint32_t>(sizeof(T)));
        }
        const uint32_t xs2 = p.xs[2] * static_cast<uint32_t>(sizeof(T));
        const L l{};
        typename L::E acc[NR][L::N];  // per input row: its S columns reduced
        bool rok[NR];
        reduce_rows(l, p, xc, xs2, col, cok, hs, acc, rok);
#pragma unroll
        for (int o = 0; o < KH; ++o) {
            const int oh = oh0 + o;
            if (oh >= p.oh) break;
            int nrows = 0;
#pragma unroll
            for (int i = 0; i < R; ++i) nrows += rok[o * SH + i];
            const int count = nrows * ncols;
            T* yp = y + n * p.ys[0] + ch * p.ys[1] + static_cast<uint32_t>(oh) * p.ys[2] + ow * p.ys[3];
            if constexpr (kPacked) {
                // A window with no input gives 0; alpha = 1, beta = 0 store the pairs as they
                // are, else blend_store's float arithmetic.
                Vec<T, V> out;
                uint32_t res[L::N];
#pragma unroll
                for (int k = 0; k < L::N; ++k) res[k] = count != 0 ? reduce_window<R>(l, acc, o * SH, k) : 0u;
                memcpy(&out, res, sizeof(out));
                if (alpha == 1.0f && beta == 0.0f) {
                    store_vec<T, V>(yp, out);
                } else {
                    float r[V];
#pragma unroll
                    for (int k = 0; k < V; ++k) r[k] = Io<T>::in(out.v[k]);
                    blend_store<T, V>(yp, r, alpha, beta);
                }
            } else {
                float res[V];
#pragma unroll
                for (int k = 0; k < V; ++k) res[k] = reduce_window<R>(l, acc, o * SH, k);
                if (kOp != FwdOp::kAvg) {
#pragma unroll
                    for (int k = 0; k < V; ++k) res[k] = count == 0 ? 0.0f : res[k];
                } else {
                    int div = count;
                    if (p.mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING) {
                        // Window positions inside the padded input [-pad, in + pad).
                        const int h0 = hs + o * SH;
                        const int h_lo = max(h0, -p.ph), h_hi = min(h0 + R, p.h + p.ph);
                        const int w_lo = max(ws, -p.pw), w_hi = min(ws + S, p.w + p.pw);
                        div = max(h_hi - h_lo, 0) * max(w_hi - w_lo, 0);
                    }
#pragma unroll
                    for (int k = 0; k < V; ++k) res[k] = div > 0 ? res[k] / static_cast<float>(div) : 0.0f;
                }
                blend_store<T, V>(yp, res, alpha, beta);
            }
        }
    }
}

// ---- HALF / BFLOAT16 in pairs (W innermost, 3x3 / 2x2 at stride 2, max) ----
//
// A 16-bit element costs the same instructions as a FLOAT one but half the bytes, so the
// one-element-a-lane kernels above run instruction-bound on HALF / BFLOAT16 (pool_fwd_cols
// 55% of copy, pool_bwd_strips 37%, against 91% / 72% for FLOAT). The kernels below give a
// lane two adjacent output columns: x is read as aligned 4-byte column pairs, the max runs
// on packed pairs (max.{bf16x2,f16x2}: two windows an instruction, exact, no conversion),
// and dx is written as 4-byte pairs. They need W even (a column pair never straddles the
// edge of a row), x (and dx) with W stride 1, every other stride even and the pointers
// 4-byte aligned; anything else takes the kernels above.

// x column pairs of the two windows at columns ws and ws + 2 (SW = 2): column pair pb + k,
// k < NP, holds elements e[2k], e[2k + 1] counted from column 2 * pb = ws - PAR (PAR = ws
// & 1 = pad & 1), so the window at ws is e[PAR ..] and the one at ws + 2 is e[PAR + 2 ..]
// and its position j is (e[PAR + j], e[PAR + 2 + j]) = halves<(PAR + j) & 1>(pair (PAR +
// j) / 2, the pair after it). Pairs outside the row read the clamped pair (0 .. W/2 - 1):
// both of a pair's columns are in the row or neither (W even).
template <int S, int PAR>
struct ColPairs {
    static constexpr int NP = (PAR + 2 + S + 1) / 2;  // 3x3: 3; 2x2: 2 (PAR 0) or 3
    uint32_t off[NP];                                 // byte offsets in the row (clamped)
    bool ok[NP];
    __device__ __forceinline__ ColPairs(int ws, int w) {
        const int pb = (ws - PAR) >> 1, wp = w >> 1;
#pragma unroll
        for (int k = 0; k < NP; ++k) {
            const int pk = pb + k;
            ok[k] = pk >= 0 && pk < wp;
            off[k] = static_cast<uint32_t>(min(max(pk, 0), wp - 1)) * 4u;
        }
    }
};
template <int PAR, int J, int NP>
__device__ __forceinline__ uint32_t window_pos(const uint32_t (&v)[NP]) {
    return halves<(PAR + J) & 1>(v[(PAR + J) / 2], v[(PAR + J) / 2 + 1]);
}

// Forward, HALF / BFLOAT16 max, 3x3 / 2x2 at stride 2, W innermost: one thread computes
// KH output rows of two adjacent columns (2q, 2q + 1). Its (KH - 1) * 2 + R input rows
// are read as NP column pairs each (3x3: 27 4-byte loads for 8 outputs, against 27 2-byte
// loads for 4 in pool_fwd_cols); each output row reduces its R rows pair by pair
// (max.bf16x2), masks pairs outside the row, then its S window columns as PRMT'ed pairs:
// both outputs of the row come out of one chain. Rows outside the input read the nearest
// row inside, which lies in every window that holds the missing row and any input (the
// max of a set is that of the set with a member repeated), so rows need no mask; a window
// with no input gives 0 (pool_fwd_cols' rule). The max skipping NaNs and the propagating
// one are pool_fwd_cols' fmaxf / max.NaN on exact 16-bit values: the same results.
// Bytes: x + y (+ y if beta != 0), as pool_fwd_cols.
// Ceilings at 128x256x56x56 bf16: 257 MB -> 0.061 ms at 4.2 TB/s; pool_fwd_cols<bf16>
// issues ~120 instructions an output (SASS; 0.11 ms, 55% of copy), this ~40 (27 loads at
// 3 instructions, ~30 an output row of two, setup): memory-bound, predicted 85-90% of
// copy, as FLOAT's 91%.
template <class T, bool kNan, int R, int PAR, int KH>
__global__ void __launch_bounds__(kThreads, 4)
    pool_fwd_pairs(Pool2d p, FastDiv div_a, FastDiv div_b, FastDiv div_c, uint32_t total, const T* __restrict__ x,
                   T* __restrict__ y, float alpha, float beta, bool y_pairs) {
    constexpr int S = R, NR = (KH - 1) * 2 + R;
    using Cols = ColPairs<S, PAR>;
    constexpr int NP = Cols::NP;
    const uint32_t fill = kNan ? Half2Of<T>::kNegInf : Half2Of<T>::kNan;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        // t = ((n * C + ch) * row blocks + rb) * column pairs + q
        uint32_t n, ch, rb, q;
        split4(t, div_a, div_b, div_c, &n, &ch, &rb, &q);
        const int oh0 = static_cast<int>(rb) * KH;
        const int hs = oh0 * 2 - p.ph, ws = static_cast<int>(q) * 4 - p.pw;
        const Cols cols(ws, p.w);
        // Whether each output's window holds an input column.
        const bool c0 = ws < p.w && ws + S > 0, c1 = ws + 2 < p.w && ws + 2 + S > 0;
        const char* xc = reinterpret_cast<const char*>(x + n * p.xs[0] + ch * p.xs[1]);
        const uint32_t xs2 = p.xs[2] * static_cast<uint32_t>(sizeof(T));
        uint32_t v[NR][NP];
#pragma unroll
        for (int r = 0; r < NR; ++r) {
            const char* xr = xc + static_cast<uint32_t>(min(max(hs + r, 0), p.h - 1)) * xs2;
#pragma unroll
            for (int k = 0; k < NP; ++k) v[r][k] = ld_u32(xr + cols.off[k]);
        }
        const uint32_t ow = 2 * q;
        const bool two = static_cast<int>(ow) + 1 < p.ow;
#pragma unroll
        for (int o = 0; o < KH; ++o) {
            const int oh = oh0 + o;
            if (oh >= p.oh) break;
            uint32_t m[NP];
#pragma unroll
            for (int k = 0; k < NP; ++k) {
                m[k] = v[o * 2][k];
#pragma unroll
                for (int i = 1; i < R; ++i) m[k] = max2<T, kNan>(m[k], v[o * 2 + i][k]);
                m[k] = cols.ok[k] ? m[k] : fill;
            }
            uint32_t mm = max2<T, kNan>(window_pos<PAR, 0>(m), window_pos<PAR, 1>(m));
            if constexpr (S == 3) mm = max2<T, kNan>(mm, window_pos<PAR, 2>(m));
            const bool rows = hs + o * 2 < p.h && hs + o * 2 + R > 0;
            float r0 = rows && c0 ? lo_f<T>(mm) : 0.0f, r1 = rows && c1 ? hi_f<T>(mm) : 0.0f;
            T* yp = y + n * p.ys[0] + ch * p.ys[1] + static_cast<uint32_t>(oh) * p.ys[2] + ow * p.ys[3];
            if (y_pairs && two) {
                float o0 = 0.0f, o1 = 0.0f;
                if (beta != 0.0f) {
                    const uint32_t u = ld_u32(reinterpret_cast<const char*>(yp));
                    o0 = lo_f<T>(u);
                    o1 = hi_f<T>(u);
                }
                // blend_store's arithmetic, element by element.
                r0 = alpha * r0 + (beta != 0.0f ? beta * o0 : 0.0f);
                r1 = alpha * r1 + (beta != 0.0f ? beta * o1 : 0.0f);
                *reinterpret_cast<uint32_t*>(yp) = pack2<T>(r0, r1);
            } else {
                blend_store<T, 1>(yp, &r0, alpha, beta);
                if (two) blend_store<T, 1>(yp + p.ys[3], &r1, alpha, beta);
            }
        }
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

// The argmax of two windows of R x S positions at once (the max skipping NaNs and the first
// position equal to it, per half, window_argmax's rule): pos[] their position pairs, the
// windows' rows from hs in a plane of h rows, f0 / f1 their first in-range columns (S:
// none). A window of NaNs (its max equals nothing) gives its first in-range position,
// kNoArg for none. Returns the two positions packed (low: the first window).
// The same chain with the windows' first in-range positions given (apk0, packed as the
// result): pool_bwd_walk16 knows them without the bounds arithmetic below.
template <class T, int R, int S>
__device__ __forceinline__ uint32_t pair_argmax_from(const uint32_t (&pos)[R * S], uint32_t apk0) {
    uint32_t m = pos[0];
#pragma unroll
    for (int l = 1; l < R * S; ++l) m = max2<T, false>(m, pos[l]);
    uint32_t apk = apk0;
#pragma unroll
    for (int l = R * S - 1; l >= 0; --l) {
        const uint32_t eq = eq2_mask<T>(pos[l], m);
        apk = (apk & ~eq) | (eq & (static_cast<uint32_t>(l) * 0x10001u));
    }
    return apk;
}
template <class T, int R, int S>
__device__ __forceinline__ uint32_t pair_argmax(const uint32_t (&pos)[R * S], int hs, int h, int f0, int f1) {
    const int r0 = max(0, -hs);
    const bool rany = r0 < R && hs + r0 < h;
    const uint32_t first0 = rany && f0 < S ? static_cast<uint32_t>(r0 * S + f0) : kNoArg;
    const uint32_t first1 = rany && f1 < S ? static_cast<uint32_t>(r0 * S + f1) : kNoArg;
    return pair_argmax_from<T, R, S>(pos, first0 | first1 << 16);
}

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


// The argmax of the R x S window at (hs, ws) of the plane at xb, V channels (its
// position in the window, row-major; window_reduce's rules: ties keep the first, NaNs
// are skipped and a window of NaNs gives its first position, with propagation the first
// NaN wins; kNoArg for a window holding no input). Out-of-range positions read a clamped
// address and are skipped. In-plane offsets are 32-bit (Pool2d::plane32).
template <class T, int V, int R, int S>
__device__ __forceinline__ void window_argmax(const Pool2d& p, const char* xb, int hs, int ws, int* arg) {
    uint32_t col[S];
    bool cok[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
        const int iw = ws + s;
        cok[s] = iw >= 0 && iw < p.w;
        col[s] = (cok[s] ? static_cast<uint32_t>(iw) : 0u) * (p.xs[3] * static_cast<uint32_t>(sizeof(T)));
    }
    const uint32_t xs2 = p.xs[2] * static_cast<uint32_t>(sizeof(T));
    // Out-of-range positions become NaN by adding NaN (0 elsewhere: a -0 turns +0, which
    // compares equal): an add a value, no predicate a position.
    const float kNan = __int_as_float(0x7fffffff);
    float cnan[S];
#pragma unroll
    for (int s = 0; s < S; ++s) cnan[s] = cok[s] ? 0.0f : kNan;
    float v[R * S][V];
    bool rok[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int ih = hs + r;
        rok[r] = ih >= 0 && ih < p.h;
        const char* xr = xb + (rok[r] ? static_cast<uint32_t>(ih) : 0u) * xs2;
        const float rnan = rok[r] ? 0.0f : kNan;
#pragma unroll
        for (int s = 0; s < S; ++s) {
            load_c<T, V>(at_bytes<T>(xr, col[s]), v[r * S + s]);
            const float mask = rnan + cnan[s];
#pragma unroll
            for (int k = 0; k < V; ++k) v[r * S + s][k] += mask;
        }
    }
    const int r0 = max(0, -hs), s0 = max(0, -ws);
    const int first = r0 < R && hs + r0 < p.h && s0 < S && ws + s0 < p.w ? r0 * S + s0 : static_cast<int>(kNoArg);
    if (!p.prop) {
        // The max skipping NaNs (fmaxf; out-of-range positions hold NaN), then the first
        // position holding it: two instructions a position instead of a chain of compares
        // and selects. A NaN max means the window holds only NaNs: its first position.
#pragma unroll
        for (int k = 0; k < V; ++k) {
            float m = v[0][k];
#pragma unroll
            for (int l = 1; l < R * S; ++l) m = fmaxf(m, v[l][k]);
            int a = first;
            if (m == m) {
#pragma unroll
                for (int l = R * S - 1; l >= 0; --l) a = v[l][k] == m ? l : a;
            }
            arg[k] = a;
        }
    } else {
        // NaN-propagating: window_reduce's walk (the first NaN wins).
#pragma unroll
        for (int k = 0; k < V; ++k) {
            float best = 0.0f;
            bool found = false, done = false;
            int a = first;
#pragma unroll
            for (int l = 0; l < R * S; ++l) {
                if (!rok[l / S] || !cok[l % S] || done) continue;
                const float x_l = v[l][k];
                if (x_l != x_l) {
                    a = l;
                    done = true;
                } else if (!found || x_l > best) {
                    best = x_l;
                    a = l;
                    found = true;
                }
            }
            arg[k] = a;
        }
    }
}

// Writes the SH x SW dx elements of cell (cr, cc) of the plane at xc: each gathers dy of
// the (HR + 1) x (HS + 1) windows that can cover it (arg / dv: rows cr - HR .., columns
// cc - HS ..) that chose it, in output order. Window (cr - HR + a, cc - HS + b) holds the
// element at row di + (HR - a) * SH, column dj + (HS - b) * SW of its window: compile-time
// constants, so each term is a compare and an add.
template <class T, int V, int R, int S, int SH, int SW>
__device__ __forceinline__ void cell_gather(const Pool2d& p, char* xc, int cr, int cc,
                                            const int (&arg)[(R - 1) / SH + 1][(S - 1) / SW + 1][V],
                                            const float (&dv)[(R - 1) / SH + 1][(S - 1) / SW + 1][V], float alpha,
                                            float beta) {
    constexpr int HR = (R - 1) / SH, HS = (S - 1) / SW;
    const uint32_t zs2 = p.zs[2] * static_cast<uint32_t>(sizeof(T)), zs3 = p.zs[3] * static_cast<uint32_t>(sizeof(T));
#pragma unroll
    for (int di = 0; di < SH; ++di) {
        const int ih = cr * SH - p.ph + di;
        if (ih < 0 || ih >= p.h) continue;
#pragma unroll
        for (int dj = 0; dj < SW; ++dj) {
            const int iw = cc * SW - p.pw + dj;
            if (iw < 0 || iw >= p.w) continue;
            float acc[V];
#pragma unroll
            for (int k = 0; k < V; ++k) acc[k] = 0.0f;
#pragma unroll
            for (int a = 0; a < HR + 1; ++a)
#pragma unroll
                for (int b = 0; b < HS + 1; ++b) {
                    const int lr = di + (HR - a) * SH, lc = dj + (HS - b) * SW;
                    if (lr >= R || lc >= S) continue;
#pragma unroll
                    for (int k = 0; k < V; ++k)
                        if (arg[a][b][k] == lr * S + lc) acc[k] += dv[a][b][k];
                }
            T* xp = reinterpret_cast<T*>(xc + (static_cast<uint32_t>(ih) * zs2 + static_cast<uint32_t>(iw) * zs3));
            blend_store<T, V>(xp, acc, alpha, beta);
        }
    }
}

// ---- HALF / BFLOAT16 cells, channels innermost: eight channels a thread in packed pairs ----
//
// With V = 4 and every channel in float (window_argmax / cell_gather above) a 16-bit
// element costs FLOAT's instructions for half its bytes: at 128x256x56x56, 3x3 / 2, pad 1
// the kernel ran 0.234 ms (bench 52% of copy) against FLOAT's 0.271 ms (91%). Its ceilings
// there (4.2 TB/s; the H200's ~3.3e13 lane-instructions a second at full issue):
//   bytes         x + dy + dx = 462 MB                                  -> 0.110 ms
//   instructions  SASS (beta = 0, all in range): ~330 a window item of 4 channels (9
//                 16-bit -> float converts, masks, fmaxf and the compare / select chain
//                 a channel) and ~270 a cell item of 4 channels x 4 elements; with the
//                 27% halo windows, ~43 an element of dx -> 0.134 ms at full issue; the
//                 0.234 measured is ~57% of full issue: instruction-bound.
// With V = 8 packed (16-byte loads and stores; max.{bf16x2,f16x2} and the equality masks
// two channels an instruction, no conversion in phase 1; phase 2 one setp for two channels
// and a predicated add a channel and window): SASS ~255 a window item and ~390 a cell item
// of 8 channels (bf16 3x3, 59 registers): ~22 an element -> 0.069 ms at full issue, 0.12
// at the old kernel's 57%. Predicted 0.13-0.15 ms (bench 82-94% of copy): the bytes and
// the instructions about even, FLOAT's 0.271 ms unchanged (V = 4, the same code).
//
// Phase 1 keeps a window's argmax as a 16-bit label per channel: position l as the 16-bit
// float kOne + l (1 + l / 128 in BFLOAT16, 1 + l / 1024 in HALF): a normal number, exact and
// distinct for every l <= 255 (kNoArg included), so that phase 2 tests two channels'
// labels against a position with one packed float compare. NaN-propagating windows keep
// the float path (V = 4).
template <class T>
__host__ __device__ constexpr uint32_t label2(int l) {
    return (Half2Of<T>::kOne + static_cast<uint32_t>(l)) * 0x10001u;
}

// lo += dlo where the low labels of lab and want are equal, hi += dhi where the high ones
// are: one setp.{f16x2,bf16x2} (two predicates) and two predicated adds. Labels are never
// NaN, so the float compare is the bit compare. setp.bf16x2 needs sm_90; older targets
// take the mask.
template <class T>
__device__ __forceinline__ void add_where_eq2(float& lo, float& hi, uint32_t lab, uint32_t want, float dlo,
                                              float dhi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr bool kSetp = true;
#else
    constexpr bool kSetp = std::is_same<T, __half>::value;
#endif
    if constexpr (kSetp && std::is_same<T, __half>::value) {
        asm("{\n\t.reg .pred p, q;\n\tsetp.eq.f16x2 p|q, %2, %3;\n\t"
            "@p add.f32 %0, %0, %4;\n\t@q add.f32 %1, %1, %5;\n\t}"
            : "+f"(lo), "+f"(hi)
            : "r"(lab), "r"(want), "f"(dlo), "f"(dhi));
    } else if constexpr (kSetp) {
        asm("{\n\t.reg .pred p, q;\n\tsetp.eq.bf16x2 p|q, %2, %3;\n\t"
            "@p add.f32 %0, %0, %4;\n\t@q add.f32 %1, %1, %5;\n\t}"
            : "+f"(lo), "+f"(hi)
            : "r"(lab), "r"(want), "f"(dlo), "f"(dhi));
    } else {
        const uint32_t eq = eq2_mask<T>(lab, want);
        if (eq & 0xffffu) lo += dlo;
        if (eq >> 16) hi += dhi;
    }
}

// window_argmax for 8 channels of HALF / BFLOAT16, NaNs skipped, as 4 pairs of labels
// (label2): the same rules (ties keep the first position, NaNs skipped, a window of NaNs
// gives its first position, kNoArg for a window holding no input) on exact 16-bit values,
// two channels an instruction. Out-of-range positions read a clamped address and are OR'ed
// to NaN (a pair an instruction, folded into the row and column masks), so the max skips
// them and they equal nothing; the max is __hmax2 (fmaxf's rule), the argmax the first
// position equal to it (IEEE equality: -0 == +0, as the float path).
template <class T, int R, int S>
__device__ __forceinline__ void window_argmax8(const Pool2d& p, const char* xb, int hs, int ws, uint32_t (&lab)[4]) {
    uint32_t col[S], cnan[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
        const int iw = ws + s;
        const bool ok = iw >= 0 && iw < p.w;
        col[s] = (ok ? static_cast<uint32_t>(iw) : 0u) * (p.xs[3] * static_cast<uint32_t>(sizeof(T)));
        cnan[s] = ok ? 0u : Half2Of<T>::kNan;
    }
    const uint32_t xs2 = p.xs[2] * static_cast<uint32_t>(sizeof(T));
    uint32_t v[R * S][4];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int ih = hs + r;
        const bool ok = ih >= 0 && ih < p.h;
        const char* xr = xb + (ok ? static_cast<uint32_t>(ih) : 0u) * xs2;
        const uint32_t rnan = ok ? 0u : Half2Of<T>::kNan;
#pragma unroll
        for (int s = 0; s < S; ++s) {
            const uint4 u = *reinterpret_cast<const uint4*>(xr + col[s]);
            v[r * S + s][0] = u.x | rnan | cnan[s];
            v[r * S + s][1] = u.y | rnan | cnan[s];
            v[r * S + s][2] = u.z | rnan | cnan[s];
            v[r * S + s][3] = u.w | rnan | cnan[s];
        }
    }
    const int r0 = max(0, -hs), s0 = max(0, -ws);
    const int first = r0 < R && hs + r0 < p.h && s0 < S && ws + s0 < p.w ? r0 * S + s0 : static_cast<int>(kNoArg);
    const uint32_t lfirst = label2<T>(first);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        uint32_t m = v[0][j];
#pragma unroll
        for (int l = 1; l < R * S; ++l) m = max2<T, false>(m, v[l][j]);
        // A NaN max (only NaNs, or no input) equals nothing: the first position stays.
        uint32_t a = lfirst;
#pragma unroll
        for (int l = R * S - 1; l >= 0; --l) {
            const uint32_t eq = eq2_mask<T>(v[l][j], m);
            a = (a & ~eq) | (eq & label2<T>(l));
        }
        lab[j] = a;
    }
}

// cell_gather for 8 channels of HALF / BFLOAT16: lab / dv hold the 4 label pairs and the 4
// dy pairs of each covering window. The sums are float, in output order (as cell_gather:
// the same result); dx is written as one 16-byte vector an element.
template <class T, int R, int S, int SH, int SW>
__device__ __forceinline__ void cell_gather8(const Pool2d& p, char* xc, int cr, int cc,
                                             const uint32_t (&lab)[(R - 1) / SH + 1][(S - 1) / SW + 1][4],
                                             const uint32_t (&dv)[(R - 1) / SH + 1][(S - 1) / SW + 1][4],
                                             float alpha, float beta) {
    constexpr int HR = (R - 1) / SH, HS = (S - 1) / SW;
    const uint32_t zs2 = p.zs[2] * static_cast<uint32_t>(sizeof(T)), zs3 = p.zs[3] * static_cast<uint32_t>(sizeof(T));
    // dy as float once, ahead of the elements' branches (else each element converts the
    // windows it reads again: 72 converts a cell instead of 32 for 3x3).
    float df[HR + 1][HS + 1][8];
#pragma unroll
    for (int a = 0; a < HR + 1; ++a)
#pragma unroll
        for (int b = 0; b < HS + 1; ++b)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                df[a][b][2 * j] = lo_f<T>(dv[a][b][j]);
                df[a][b][2 * j + 1] = hi_f<T>(dv[a][b][j]);
            }
#pragma unroll
    for (int di = 0; di < SH; ++di) {
        const int ih = cr * SH - p.ph + di;
        if (ih < 0 || ih >= p.h) continue;
#pragma unroll
        for (int dj = 0; dj < SW; ++dj) {
            const int iw = cc * SW - p.pw + dj;
            if (iw < 0 || iw >= p.w) continue;
            float acc[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) acc[k] = 0.0f;
#pragma unroll
            for (int a = 0; a < HR + 1; ++a)
#pragma unroll
                for (int b = 0; b < HS + 1; ++b) {
                    const int lr = di + (HR - a) * SH, lc = dj + (HS - b) * SW;
                    if (lr >= R || lc >= S) continue;
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        add_where_eq2<T>(acc[2 * j], acc[2 * j + 1], lab[a][b][j], label2<T>(lr * S + lc),
                                         df[a][b][2 * j], df[a][b][2 * j + 1]);
                }
            char* xp = xc + (static_cast<uint32_t>(ih) * zs2 + static_cast<uint32_t>(iw) * zs3);
            uint32_t old[4] = {0u, 0u, 0u, 0u};
            if (beta != 0.0f) {
                const uint4 u = *reinterpret_cast<const uint4*>(xp);
                old[0] = u.x, old[1] = u.y, old[2] = u.z, old[3] = u.w;
            }
            uint32_t out[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                // blend_store's arithmetic, element by element.
                const float r0 = alpha * acc[2 * j] + (beta != 0.0f ? beta * lo_f<T>(old[j]) : 0.0f);
                const float r1 = alpha * acc[2 * j + 1] + (beta != 0.0f ? beta * hi_f<T>(old[j]) : 0.0f);
                out[j] = pack2<T>(r0, r1);
            }
            *reinterpret_cast<uint4*>(xp) = make_uint4(out[0], out[1], out[2], out[3]);
        }
    }
}

// Max backward, 2-D, the common windows fixed at compile time (3x3 and 2x2 at stride 2).
// dx is cut into cells: cell (cr, cc) holds the dx elements whose last covering window
// is output (cr, cc), rows cr * SH - PH .. + SH - 1 and columns likewise (the cells past
// the last output row / column hold the bottom and right elements that only earlier
// windows cover). For channels innermost (W innermost takes pool_bwd_strips below): a
// block owns TCH x TCW cells of TCV channel vectors (V channels each when vectors fit,
// else V = 1):
//   phase 1: the argmax (position in the window, window_reduce's rules) and dy of every
//            window covering those cells - (TCH + HR) x (TCW + HS) windows, HR = (R - 1)
//            / SH rows and HS columns of halo that the neighbouring block also computes -
//            into shared memory (1 byte + one T per channel);
//   phase 2: one thread per cell gathers its SH x SW elements from the (HR + 1) x
//            (HS + 1) windows that can cover them, in output order (deterministic, no
//            atomics, no scratch); an element's position in each of those windows is a
//            compile-time constant, so the gather is a compare and an add.
// Bytes: x + dy + dx (+ dx if beta != 0), the halo windows' x and dy from L1 / L2.
// Instructions: a window's argmax is computed once (plus the halo: 8 x 8 cells, 27%),
// against four times per window in the per-element gather this replaced (0.79-1.02 ms,
// 12-31% of copy, instruction-bound at SM 67-84%).
struct PoolBwdCells {
    Pool2d p;
    int tch, tcw, tcv;          // cells a block owns: rows, columns, channel vectors
    int cells_h, cells_w;       // the cell grid
    int tiles_h, tiles_w, tiles_c;
    FastDiv div_tc, div_tw, div_th;  // block unit -> (n, tile row, tile column, channel tile)
    FastDiv div_v, div_wc, div_cw;   // phase items: channel vector, window column, cell column
    uint32_t units;
};

// V = 8 on HALF / BFLOAT16 (NaNs skipped): the packed pairs above, a 16-bit label a channel.
template <class T, int V>
constexpr bool kCellsPacked = sizeof(T) == 2 && V == 8;
// Shared-memory bytes a window channel: dy (T) and the argmax (a byte, or a 16-bit label).
template <class T, int V>
constexpr size_t kCellsBytes = sizeof(T) + (kCellsPacked<T, V> ? 2 : 1);

template <class T, int V, int R, int S, int SH, int SW>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_cells(PoolBwdCells t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx, float alpha,
                   float beta) {
    constexpr int HR = (R - 1) / SH, HS = (S - 1) / SW;
    constexpr bool kPacked = kCellsPacked<T, V>;
    static_assert(V <= 4 || kPacked, "8 channels a thread only packed");
    extern __shared__ __align__(16) unsigned char pool_smem[];
    const Pool2d& p = t.p;
    const int nwr = t.tch + HR, nwc = t.tcw + HS;
    const uint32_t nwin = static_cast<uint32_t>(nwr * nwc * t.tcv);
    T* dys = reinterpret_cast<T*>(pool_smem);                          // [window][V]
    uint8_t* args = reinterpret_cast<uint8_t*>(dys + nwin * V);       // [window][V]
    // Packed: the same dy, then 16-byte vectors of 8 labels.
    uint4* dys8 = reinterpret_cast<uint4*>(pool_smem);
    uint4* labs8 = dys8 + nwin;
    for (uint32_t u = blockIdx.x; u < t.units; u += gridDim.x) {
        // u = ((n * tiles_h + th) * tiles_w + tw) * tiles_c + tcg
        uint32_t n, th, tw, tcg;
        split4(u, t.div_tc, t.div_tw, t.div_th, &n, &th, &tw, &tcg);
        const int cr0 = static_cast<int>(th) * t.tch, cc0 = static_cast<int>(tw) * t.tcw;
        const int cv0 = static_cast<int>(tcg) * t.tcv;
        const T* xn = x + n * p.xs[0];
        const T* dn = dy + n * p.ys[0];
        // Phase 1: window (cr0 - HR + wr, cc0 - HS + wc), channel vector cv0 + cv.
        for (uint32_t i = threadIdx.x; i < nwin; i += blockDim.x) {
            const uint32_t qi = t.div_v.div(i);
            const int cv = static_cast<int>(i - qi * t.div_v.d);
            const uint32_t wr = t.div_wc.div(qi);
            const int wc = static_cast<int>(qi - wr * t.div_wc.d);
            const int oh = cr0 - HR + static_cast<int>(wr), ow = cc0 - HS + wc;
            const int ch = (cv0 + cv) * V;
            if constexpr (kPacked) {
                constexpr uint32_t kNone = label2<T>(kNoArg);
                uint4 d = make_uint4(0u, 0u, 0u, 0u), l = make_uint4(kNone, kNone, kNone, kNone);
                if (oh >= 0 && oh < p.oh && ow >= 0 && ow < p.ow && ch < p.c) {
                    d = *reinterpret_cast<const uint4*>(dn + static_cast<uint32_t>(ch) * p.ys[1] +
                                                        static_cast<uint32_t>(oh) * p.ys[2] +
                                                        static_cast<uint32_t>(ow) * p.ys[3]);
                    uint32_t a[4];
                    window_argmax8<T, R, S>(p,
                                            reinterpret_cast<const char*>(xn + static_cast<uint32_t>(ch) * p.xs[1]),
                                            oh * SH - p.ph, ow * SW - p.pw, a);
                    l = make_uint4(a[0], a[1], a[2], a[3]);
                }
                dys8[i] = d;
                labs8[i] = l;
            } else {
                int arg[V];
                float dv[V];
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    arg[k] = kNoArg;
                    dv[k] = 0.0f;
                }
                if (oh >= 0 && oh < p.oh && ow >= 0 && ow < p.ow && ch < p.c) {
                    load_c<T, V>(dn + static_cast<uint32_t>(ch) * p.ys[1] + static_cast<uint32_t>(oh) * p.ys[2] +
                                     static_cast<uint32_t>(ow) * p.ys[3],
                                 dv);
                    window_argmax<T, V, R, S>(p,
                                              reinterpret_cast<const char*>(xn + static_cast<uint32_t>(ch) * p.xs[1]),
                                              oh * SH - p.ph, ow * SW - p.pw, arg);
                }
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    dys[i * V + k] = Io<T>::out(dv[k]);
                    args[i * V + k] = static_cast<uint8_t>(arg[k]);
                }
            }
        }
        __syncthreads();
        // Phase 2: cell (cr0 + cr, cc0 + cc), channel vector cv0 + cv.
        T* xo = dx + n * p.zs[0];
        const uint32_t ncell = static_cast<uint32_t>(t.tch * t.tcw * t.tcv);
        for (uint32_t i = threadIdx.x; i < ncell; i += blockDim.x) {
            const uint32_t qi = t.div_v.div(i);
            const int cv = static_cast<int>(i - qi * t.div_v.d);
            const uint32_t crl = t.div_cw.div(qi);
            const int ccl = static_cast<int>(qi - crl * t.div_cw.d);
            const int cr = cr0 + static_cast<int>(crl), cc = cc0 + ccl;
            const int ch = (cv0 + cv) * V;
            if (cr >= t.cells_h || cc >= t.cells_w || ch >= p.c) continue;
            if constexpr (kPacked) {
                uint32_t lab[HR + 1][HS + 1][4], dv[HR + 1][HS + 1][4];
#pragma unroll
                for (int a = 0; a < HR + 1; ++a)
#pragma unroll
                    for (int b = 0; b < HS + 1; ++b) {
                        const uint32_t w = ((crl + a) * nwc + ccl + b) * t.tcv + cv;
                        const uint4 l = labs8[w], d = dys8[w];
                        lab[a][b][0] = l.x, lab[a][b][1] = l.y, lab[a][b][2] = l.z, lab[a][b][3] = l.w;
                        dv[a][b][0] = d.x, dv[a][b][1] = d.y, dv[a][b][2] = d.z, dv[a][b][3] = d.w;
                    }
                cell_gather8<T, R, S, SH, SW>(p, reinterpret_cast<char*>(xo + static_cast<uint32_t>(ch) * p.zs[1]), cr,
                                              cc, lab, dv, alpha, beta);
            } else {
                int arg[HR + 1][HS + 1][V];
                float dv[HR + 1][HS + 1][V];
#pragma unroll
                for (int a = 0; a < HR + 1; ++a)
#pragma unroll
                    for (int b = 0; b < HS + 1; ++b) {
                        const uint32_t w = ((crl + a) * nwc + ccl + b) * t.tcv + cv;
#pragma unroll
                        for (int k = 0; k < V; ++k) {
                            arg[a][b][k] = args[w * V + k];
                            dv[a][b][k] = Io<T>::in(dys[w * V + k]);
                        }
                    }
                cell_gather<T, V, R, S, SH, SW>(p, reinterpret_cast<char*>(xo + static_cast<uint32_t>(ch) * p.zs[1]),
                                                cr, cc, arg, dv, alpha, beta);
            }
        }
        __syncthreads();  // the shared windows are reused by the next unit
    }
}

template <class T, int V, int R, int S, int SH, int SW>
Status launch_bwd_cells(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    constexpr int HR = (R - 1) / SH, HS = (S - 1) / SW;
    PoolBwdCells t;
    t.p = p;
    t.cells_h = (p.h - 1 + p.ph) / SH + 1;
    t.cells_w = (p.w - 1 + p.pw) / SW + 1;
    const int cvs = p.c / V;  // channel vectors (V divides C when V > 1)
    // Up to 8 vectors (32 channels when V = 1) by 8 columns by about 512 / (8 * vectors) rows of cells.
    t.tcv = std::min(cvs, V > 1 ? 8 : 32);
    t.tcw = 8;
    t.tch = std::max(1, std::min(64, 512 / (t.tcw * t.tcv)));
    t.tiles_h = (t.cells_h + t.tch - 1) / t.tch;
    t.tiles_w = (t.cells_w + t.tcw - 1) / t.tcw;
    t.tiles_c = (cvs + t.tcv - 1) / t.tcv;
    const int64_t units = static_cast<int64_t>(p.n) * t.tiles_h * t.tiles_w * t.tiles_c;
    if (units == 0) return Status::ok();
    if (units >= (int64_t{1} << 32))
        return core::make_status(CUDNN_STATUS_NOT_SUPPORTED,
                                 "cudnnPoolingBackward: dx (n=%d c=%d h=%d w=%d) needs %lld blocks of cells, over 2^32",
                                 p.n, p.c, p.h, p.w, static_cast<long long>(units));
    t.units = static_cast<uint32_t>(units);
    t.div_tc = FastDiv(static_cast<uint32_t>(t.tiles_c));
    t.div_tw = FastDiv(static_cast<uint32_t>(t.tiles_w));
    t.div_th = FastDiv(static_cast<uint32_t>(t.tiles_h));
    t.div_v = FastDiv(static_cast<uint32_t>(t.tcv));
    t.div_wc = FastDiv(static_cast<uint32_t>(t.tcw + HS));
    t.div_cw = FastDiv(static_cast<uint32_t>(t.tcw));
    const size_t smem = static_cast<size_t>((t.tch + HR) * (t.tcw + HS) * t.tcv) * V * kCellsBytes<T, V>;
    pool_bwd_cells<T, V, R, S, SH, SW><<<std::min<uint32_t>(t.units, 1u << 30), kThreads, smem, h.stream>>>(
        t, static_cast<const T*>(pb.x_data), static_cast<const T*>(pb.dy_data), static_cast<T*>(pb.dx_data),
        static_cast<float>(pb.out.alpha), static_cast<float>(pb.out.beta));
    return launched("cuda_pooling_bwd");
}

// Max backward, W innermost (NCHW and the like), the same cells without shared memory: a
// warp owns a strip of K cell rows by 32 - HS cell columns of one (n, c) plane, lane l
// the window column ow0 - HS + l (lane 0 a halo lane when HS = 1: it computes its window
// for lane 1 and writes nothing). Walking down the strip, each lane computes one window's
// argmax and dy a row, takes its left neighbour's by a shuffle and carries the row above
// in registers, so every window is computed once (plus HR halo rows a strip: 3x3/2, K = 8:
// 12%) with no block-wide barrier. Bytes: x + dy + dx (+ dx if beta != 0).
struct PoolBwdStrips {
    Pool2d p;
    int cells_h, cells_w, strips, segs;
    FastDiv div_segs, div_strips, div_c;
    uint32_t warps;
};

template <class T, int R, int S, int SH, int SW, int K>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_strips(PoolBwdStrips t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                    float alpha, float beta) {
    constexpr int HR = (R - 1) / SH, HS = (S - 1) / SW;
    static_assert(HR <= 1 && HS <= 1, "one halo row / column");
    const Pool2d& p = t.p;
    const int lane = static_cast<int>(threadIdx.x & 31);
    const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
    for (uint32_t wi = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; wi < t.warps; wi += stride) {
        // wi = ((n * C + c) * strips + strip) * segs + seg
        uint32_t n, c, strip_u, seg_u;
        split4(wi, t.div_segs, t.div_strips, t.div_c, &n, &c, &strip_u, &seg_u);
        const int seg = static_cast<int>(seg_u), strip = static_cast<int>(strip_u);
        const int ow = seg * (32 - HS) - HS + lane;  // this lane's window column, its cell column
        const bool owns = lane >= HS && ow < t.cells_w;
        const bool col_ok = ow >= 0 && ow < p.ow;
        const int cr0 = strip * K, cr1 = min(cr0 + K, t.cells_h);
        const char* xb = reinterpret_cast<const char*>(x + n * p.xs[0] + c * p.xs[1]);
        const T* db = dy + n * p.ys[0] + c * p.ys[1];
        char* ob = reinterpret_cast<char*>(dx + n * p.zs[0] + c * p.zs[1]);
        int arg[HR + 1][HS + 1][1];
        float dv[HR + 1][HS + 1][1];
#pragma unroll
        for (int a = 0; a < HR + 1; ++a)
#pragma unroll
            for (int b = 0; b < HS + 1; ++b) {
                arg[a][b][0] = kNoArg;
                dv[a][b][0] = 0.0f;
            }
        for (int cr = cr0 - HR; cr < cr1; ++cr) {  // the same trip count in every lane
            int a_own = kNoArg;
            float d_own = 0.0f;
            if (col_ok && cr >= 0 && cr < p.oh) {
                d_own = Io<T>::in(db[static_cast<uint32_t>(cr) * p.ys[2] + static_cast<uint32_t>(ow) * p.ys[3]]);
                window_argmax<T, 1, R, S>(p, xb, cr * SH - p.ph, ow * SW - p.pw, &a_own);
            }
            if (HR == 1) {
#pragma unroll
                for (int b = 0; b < HS + 1; ++b) {
                    arg[0][b][0] = arg[HR][b][0];
                    dv[0][b][0] = dv[HR][b][0];
                }
            }
            arg[HR][HS][0] = a_own;
            dv[HR][HS][0] = d_own;
            if (HS == 1) {
                arg[HR][0][0] = __shfl_up_sync(0xffffffffu, a_own, 1);
                dv[HR][0][0] = __shfl_up_sync(0xffffffffu, d_own, 1);
            }
            if (cr >= cr0 && owns) cell_gather<T, 1, R, S, SH, SW>(p, ob, cr, ow, arg, dv, alpha, beta);
        }
    }
}

template <class T, int R, int S, int SH, int SW>
Status launch_bwd_strips(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    constexpr int HS = (S - 1) / SW, kK = 8;
    PoolBwdStrips t;
    t.p = p;
    t.cells_h = (p.h - 1 + p.ph) / SH + 1;
    t.cells_w = (p.w - 1 + p.pw) / SW + 1;
    t.strips = (t.cells_h + kK - 1) / kK;
    t.segs = (t.cells_w + 32 - HS - 1) / (32 - HS);
    const int64_t warps = static_cast<int64_t>(p.n) * p.c * t.strips * t.segs;
    if (warps == 0) return Status::ok();
    if (warps * 32 >= (int64_t{1} << 32))
        return core::make_status(CUDNN_STATUS_NOT_SUPPORTED,
                                 "cudnnPoolingBackward: dx (n=%d c=%d h=%d w=%d) needs %lld threads, over 2^32", p.n,
                                 p.c, p.h, p.w, static_cast<long long>(warps * 32));
    t.warps = static_cast<uint32_t>(warps);
    t.div_segs = FastDiv(static_cast<uint32_t>(t.segs));
    t.div_strips = FastDiv(static_cast<uint32_t>(t.strips));
    t.div_c = FastDiv(static_cast<uint32_t>(p.c));
    pool_bwd_strips<T, R, S, SH, SW, kK><<<grid_for(warps * 32), kThreads, 0, h.stream>>>(
        t, static_cast<const T*>(pb.x_data), static_cast<const T*>(pb.dy_data), static_cast<T*>(pb.dx_data),
        static_cast<float>(pb.out.alpha), static_cast<float>(pb.out.beta));
    return launched("cuda_pooling_bwd");
}

// Max backward, W innermost (NCHW and the like), the fixed windows, NaNs skipped: a block
// owns a band of cell rows of one (n, c) plane (the whole plane when it fits: 56 x 56 is
// one band) and works in shared memory:
//   stage    the x rows its windows read, as float, with NaN in the rows and columns
//            outside the plane (16-byte vector loads where the rows allow), and a zeroed
//            float accumulator over the same rows;
//   windows  each thread the argmax of up to kPlanesWin windows (band rows cr0 - HR ..
//            cr1 - 1, the HR halo rows also computed by the band above), held in registers
//            with their dy: the fmaxf max and the first position equal to it
//            (window_argmax's rule), no bounds a position (the NaN border);
//   scatter  the windows add their dy at their argmax in the accumulator, one class of
//            windows at a time ((oh mod 2, ow mod 2) for 3x3: windows of a class never
//            overlap, so no atomics and a fixed order: deterministic);
//   store    the band's dx rows from the accumulator (alpha, beta), in 16-byte vectors.
// Instructions (SASS): ~65 a window of 9 positions (load, max, compare, select) and one add,
// against cell_gather's compare a window position and element; every global access a row
// at a time (pool_bwd_strips / pool_bwd_pairs issue 4-byte accesses a lane two elements
// apart, half of each sector an instruction, and wait on each row's loads with little
// else in flight: Nsight, DRAM 47% / L2 88% of peak on pool_bwd_pairs).
// The sums of an element covered by several windows run in class order, not output order
// (cell_gather's): the same terms, the float rounding of their sum may differ in the last bit.
// Bytes: x + dy + dx (+ dx if beta != 0), and the halo rows of neighbouring bands.
// Measured at 128x256x56x56, 3x3 / 2, pad 1 (H200): FLOAT 0.339 -> 0.304-0.307 ms against
// pool_bwd_strips (79-80% of the bench's copy). A HALF / BFLOAT16 form (the same code with
// 8-element staging groups) measured 0.257 ms against pool_bwd_pairs' 0.216: it issues as
// many instructions a window and element as FLOAT (every value a float in shared memory)
// for half the bytes. So the kernel is FLOAT's only; 16-bit needs packed windows.
constexpr int kPlanesWin = 4;                // windows a thread: bands of up to 4 x kThreads windows
constexpr size_t kPlanesSmem = 32 * 1024;    // shared memory a block: 7 blocks an SM

struct PoolBwdPlanes {
    Pool2d p;
    int cells_h, kb;       // cell rows of the plane, of a band
    int nrg;               // window rows a block takes at once: kThreads / OW
    int pitch, apitch;     // staged row pitch in floats: x (borders included), accumulator
    uint32_t units;        // planes x bands
    FastDiv div_bands, div_c, div_ow;
    FastDiv div_xg, div_ag;  // staging groups (kPlanesG) a staged x row, an accumulator row
    bool vec_x, vec_dx;      // 16-byte vector loads / stores
};

// Staging groups: the 4 floats of a 16-byte vector; the staged rows keep one group of
// border columns left of the plane.
constexpr int kPlanesG = 4;

// Elements iw0 .. iw0 + 3 of row ih of the plane at xp, NaN outside the plane.
__device__ __forceinline__ float4 planes_load(const char* xp, const Pool2d& p, int ih, int iw0, bool vec) {
    const float kNan = __int_as_float(0x7fffffff);
    float v[kPlanesG] = {kNan, kNan, kNan, kNan};
    if (ih >= 0 && ih < p.h && iw0 + kPlanesG > 0 && iw0 < p.w) {  // else wholly outside: no loads
        const char* row = xp + static_cast<uint32_t>(ih) * p.xs[2] * 4u;
        if (vec && iw0 >= 0 && iw0 + kPlanesG <= p.w) {
            const float4 f = __ldg(reinterpret_cast<const float4*>(row + static_cast<uint32_t>(iw0) * sizeof(float)));
            v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
        } else {
#pragma unroll
            for (int e = 0; e < kPlanesG; ++e) {
                const int iw = iw0 + e;
                if (iw >= 0 && iw < p.w)
                    v[e] = *reinterpret_cast<const float*>(row + static_cast<uint32_t>(iw) * p.xs[3] * 4u);
            }
        }
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

// dx elements iw0 .. iw0 + 3 (those inside the row) of the row at op = alpha * a + beta * dx.
__device__ __forceinline__ void planes_store(char* op, const Pool2d& p, int iw0, float4 a, bool vec, float alpha,
                                             float beta) {
    float r[kPlanesG] = {a.x, a.y, a.z, a.w};
    if (vec && iw0 + kPlanesG <= p.w) {
        float4* q = reinterpret_cast<float4*>(op + static_cast<uint32_t>(iw0) * sizeof(float));
        float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (beta != 0.0f) o = *q;
        const float old[kPlanesG] = {o.x, o.y, o.z, o.w};
#pragma unroll
        for (int e = 0; e < kPlanesG; ++e) r[e] = alpha * r[e] + (beta != 0.0f ? beta * old[e] : 0.0f);
        *q = make_float4(r[0], r[1], r[2], r[3]);
        return;
    }
#pragma unroll
    for (int e = 0; e < kPlanesG; ++e) {
        const int iw = iw0 + e;
        if (iw < p.w)
            blend_store<float, 1>(reinterpret_cast<float*>(op + static_cast<uint32_t>(iw) * p.zs[3] * 4u), &r[e],
                                  alpha, beta);
    }
}

template <int R, int S>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_planes(PoolBwdPlanes t, const float* __restrict__ x, const float* __restrict__ dy,
                    float* __restrict__ dx, float alpha, float beta) {
    constexpr int HR = (R - 1) / 2, HS = (S - 1) / 2, kClasses = (HR + 1) * (HS + 1), G = kPlanesG;
    extern __shared__ __align__(16) unsigned char pool_smem[];
    const Pool2d& p = t.p;
    float* xs = reinterpret_cast<float*>(pool_smem);  // [staged row][pitch]
    const int srows = (t.kb - 1 + HR) * 2 + R;         // staged rows of the largest band
    float* acc = xs + srows * t.pitch;                 // [staged row][apitch]
    for (uint32_t u = blockIdx.x; u < t.units; u += gridDim.x) {
        const uint32_t plane = t.div_bands.div(u), band = u - plane * t.div_bands.d;
        const uint32_t n = t.div_c.div(plane), c = plane - n * t.div_c.d;
        const int cr0 = static_cast<int>(band) * t.kb, cr1 = min(cr0 + t.kb, t.cells_h);
        const int o0 = max(0, cr0 - HR), o1 = min(p.oh, cr1);  // window rows
        const int xr0 = (cr0 - HR) * 2 - p.ph;                 // first staged row (may be < 0)
        const int rows = (cr1 - 1 - (cr0 - HR)) * 2 + R;
        const char* xp = reinterpret_cast<const char*>(x + n * p.xs[0] + c * p.xs[1]);
        const uint32_t nx = static_cast<uint32_t>(rows) * t.div_xg.d;
        for (uint32_t l = threadIdx.x; l < nx; l += blockDim.x) {
            const uint32_t r = t.div_xg.div(l), g = l - r * t.div_xg.d;
            reinterpret_cast<float4*>(xs)[l] = planes_load(xp, p, xr0 + static_cast<int>(r), (static_cast<int>(g) - 1) * G, t.vec_x);
        }
        const uint32_t na = static_cast<uint32_t>(rows * t.apitch / 4);
        for (uint32_t l = threadIdx.x; l < na; l += blockDim.x)
            reinterpret_cast<float4*>(acc)[l] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        // Thread (rg, ow) takes the windows of column ow, rows o0 + rg + k * nrg.
        const int rg = static_cast<int>(t.div_ow.div(threadIdx.x)), ow = static_cast<int>(threadIdx.x) - rg * p.ow;
        const int ws = ow * 2 - p.pw;
        // Row k's dy and window: a fixed step from row 0's (no per-window address math).
        const float* drow = dy + (n * p.ys[0] + c * p.ys[1] + static_cast<uint32_t>(o0 + rg) * p.ys[2] +
                              static_cast<uint32_t>(ow) * p.ys[3]);
        const uint32_t dstep = static_cast<uint32_t>(t.nrg) * p.ys[2];
        const float* wrow = xs + ((o0 + rg) * 2 - p.ph - xr0) * t.pitch + ws + G;
        const int wstep = 2 * t.nrg * t.pitch;
        int pos[kPlanesWin], cls[kPlanesWin];  // accumulator index of the argmax (-1: none), class
        float dv[kPlanesWin];
#pragma unroll
        for (int k = 0; k < kPlanesWin; ++k, drow += dstep, wrow += wstep) {
            const int oh = o0 + rg + k * t.nrg;
            pos[k] = -1;
            cls[k] = 0;
            dv[k] = 0.0f;
            if (rg >= t.nrg || oh >= o1) continue;
            dv[k] = *drow;
            const int hs = oh * 2 - p.ph;
            const float* wb = wrow;
            float v[R * S];
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int s = 0; s < S; ++s) v[r * S + s] = wb[r * t.pitch + s];
            float m = v[0];
#pragma unroll
            for (int l = 1; l < R * S; ++l) m = fmaxf(m, v[l]);
            // The first position holding the max (when none before the last does, the last
            // does); a NaN max (only NaNs, or no input) takes the first position in the
            // plane, -1 for none.
            int a = R * S - 1;
            if (m == m) {
#pragma unroll
                for (int l = R * S - 2; l >= 0; --l) a = v[l] == m ? l : a;
            } else {
                const int r0 = max(0, -hs), s0 = max(0, -ws);
                a = r0 < R && hs + r0 < p.h && s0 < S && ws + s0 < p.w ? r0 * S + s0 : -1;
            }
            if (a >= 0) pos[k] = (hs - xr0 + a / S) * t.apitch + ws + a % S;
            cls[k] = (oh & HR) * (HS + 1) + (ow & HS);
        }
#pragma unroll
        for (int q = 0; q < kClasses; ++q) {
#pragma unroll
            for (int k = 0; k < kPlanesWin; ++k)
                if (pos[k] >= 0 && cls[k] == q) acc[pos[k]] += dv[k];
            __syncthreads();
        }
        const int dh0 = max(0, cr0 * 2 - p.ph), dh1 = min(p.h, cr1 * 2 - p.ph);
        char* op = reinterpret_cast<char*>(dx + n * p.zs[0] + c * p.zs[1]);
        const uint32_t nd = static_cast<uint32_t>(max(0, dh1 - dh0)) * t.div_ag.d;
        for (uint32_t l = threadIdx.x; l < nd; l += blockDim.x) {
            const uint32_t r = t.div_ag.div(l), g = l - r * t.div_ag.d;
            const int ih = dh0 + static_cast<int>(r);
            planes_store(op + static_cast<uint32_t>(ih) * p.zs[2] * 4u, p, static_cast<int>(g) * G,
                         reinterpret_cast<const float4*>(acc + (ih - xr0) * t.apitch)[g], t.vec_dx, alpha, beta);
        }
        __syncthreads();  // the next unit stages over these rows
    }
}

// The bands of the planes kernels (t: PoolBwdPlanes or PoolBwdPlanes16, with p, cells_h,
// nrg, pitch and apitch set): the tallest band whose window rows (kb + HR) the block holds,
// nrg rows at once and `win` a thread, and whose staged rows take at most kPlanesSmem
// bytes (bytes(kb)), cut as evenly as the height allows; then the units, divisors and
// vector flags (G elements a 16-byte group). False when one cell row does not fit.
template <class Plan, class Bytes>
bool plan_bands(const core::PoolingBwdProblem& pb, const Pool2d& p, int hr, int win, int g, Bytes bytes, Plan* t,
                size_t* smem) {
    auto fits = [&](int k) { return k + hr <= t->nrg * win && bytes(k) <= kPlanesSmem; };
    int kb = t->cells_h;
    while (kb > 1 && !fits(kb)) --kb;
    if (!fits(kb)) return false;
    const int bands = (t->cells_h + kb - 1) / kb;
    t->kb = (t->cells_h + bands - 1) / bands;
    *smem = bytes(t->kb);
    const int64_t units = static_cast<int64_t>(p.n) * p.c * bands;
    if (units >= (int64_t{1} << 31)) return false;
    t->units = static_cast<uint32_t>(units);
    auto vec_ok = [&](const TensorDesc& d, const void* ptr) {
        return d.strides[3] == 1 && d.strides[2] % g == 0 && d.strides[1] % g == 0 && d.strides[0] % g == 0 &&
               aligned_to(ptr, 16);
    };
    t->vec_x = vec_ok(pb.x, pb.x_data);
    t->vec_dx = vec_ok(pb.dx, pb.dx_data);
    t->div_bands = FastDiv(static_cast<uint32_t>(bands));
    t->div_c = FastDiv(static_cast<uint32_t>(p.c));
    t->div_xg = FastDiv(static_cast<uint32_t>(t->pitch / g));
    t->div_ag = FastDiv(static_cast<uint32_t>(t->apitch / g));
    return true;
}

// The band plan of pool_bwd_planes (FLOAT); false when the problem is not for it (NaN
// propagation, a left pad over the staged border) or one cell row's band does not fit.
template <int R, int S>
bool plan_bwd_planes(const core::PoolingBwdProblem& pb, const Pool2d& p, PoolBwdPlanes* t, size_t* smem) {
    constexpr int HR = (R - 1) / 2, G = kPlanesG;
    if (p.prop || p.pw > G || p.ow < 1 || p.ow > kThreads) return false;
    t->p = p;
    t->cells_h = (p.h - 1 + p.ph) / 2 + 1;
    t->pitch = (G + p.w + 4 + G - 1) / G * G;  // >= 4 border columns right of the plane
    t->apitch = (p.w + G - 1) / G * G;
    // The rightmost window column stays inside the staged row.
    if ((p.ow - 1) * 2 - p.pw + S > t->pitch - G) return false;
    t->nrg = kThreads / p.ow;
    auto bytes = [&](int kb) {
        return static_cast<size_t>((kb - 1 + HR) * 2 + R) * static_cast<size_t>(t->pitch + t->apitch) * 4;
    };
    if (!plan_bands(pb, p, HR, kPlanesWin, G, bytes, t, smem)) return false;
    t->div_ow = FastDiv(static_cast<uint32_t>(p.ow));
    return true;
}

template <int R, int S>
Status launch_bwd_planes(const core::Handle& h, const core::PoolingBwdProblem& pb, const PoolBwdPlanes& t,
                         size_t smem) {
    if (t.units == 0) return Status::ok();
    pool_bwd_planes<R, S><<<std::min<uint32_t>(t.units, 1u << 30), kThreads, smem, h.stream>>>(
        t, static_cast<const float*>(pb.x_data), static_cast<const float*>(pb.dy_data), static_cast<float*>(pb.dx_data),
        static_cast<float>(pb.out.alpha), static_cast<float>(pb.out.beta));
    return launched("cuda_pooling_bwd");
}

// Max backward, HALF / BFLOAT16 skipping NaNs, W innermost, 3x3 / 2x2 at stride 2: the
// bands, window classes and float accumulator of pool_bwd_planes, with
//   stage    x kept in its 16 bits (NaN bits outside the plane), 16-byte groups of 8. The
//            grid is persistent (a 16-bit band is half FLOAT's bytes a block, too few in
//            flight): each thread loads its first kPlanes16Pre groups of the block's next
//            unit into registers before this unit's windows, so their DRAM latency
//            overlaps the windows, scatter and stores, and writes them after;
//   windows  two adjacent window columns a thread (2 pw, 2 pw + 1) in one packed chain, as
//            pool_bwd_pairs: a window row is NP 4-byte shared loads and PRMTs
//            (window_pos), the max max.bf16x2 / f16x2 skipping NaNs (exact: the max of
//            16-bit values is one of them), the argmax the first position equal to it
//            (eq2_mask), the first in-range position for a window of NaNs
//            (window_argmax's rule);
//   scatter  as FLOAT's, the two windows of a pair in their own classes;
//   store    dx rows in 16-byte groups of 8 from the accumulator (alpha, beta).
// Bytes: x + dy + dx (+ dx if beta != 0), and the halo rows of neighbouring bands.
// Opt-in (ODNN_POOL_PLANES16=on; the GPU suite runs it): predicted memory-bound (~55 M warp
// instructions at 128x256x56x56, about half the DRAM time), it measured 0.256 ms against
// pool_bwd_pairs' 0.216 at 3x3, 0.266 against 0.191 at 128x64x112x112 (three bands a
// plane) and 0.212 against 0.183 at 2x2 on the H200, and the same 0.25 ms at 3x3 on an
// H100 (docs/PERFORMANCE.md): it waits rather than streams, so pool_bwd_pairs stays the
// default until a profile says where the bands' time goes.
constexpr int kPlanesG16 = 8;     // 16-bit staging groups: the 8 elements of a 16-byte vector
constexpr int kPlanes16Pre = 4;   // staging groups a thread prefetches for the next unit
constexpr int kPlanes16Win = 2;   // window pairs a thread: bands of up to 2 x kThreads pairs

struct PoolBwdPlanes16 {
    Pool2d p;
    int cells_h, kb;       // cell rows of the plane, of a band
    int pairs_w;           // window pairs a row: ceil(OW / 2)
    int nrg;               // pair rows a block takes at once: kThreads / pairs_w
    int pitch, apitch;     // staged x row pitch in 16-bit elements (kPlanesG16 border columns
                           // left of the plane), accumulator row pitch in floats
    int srows;             // staged rows of the largest band
    uint32_t units;        // planes x bands
    FastDiv div_bands, div_c, div_pw;
    FastDiv div_xg, div_ag;  // staging groups a staged x row, store groups an accumulator row
    bool vec_x, vec_dx;      // 16-byte vector loads / stores
};

// The rows of a unit (plane x band) of pool_bwd_planes16.
struct Planes16Unit {
    uint32_t n, c;
    int cr0, cr1;  // cell rows
    int xr0, rows; // first staged input row (may be < 0), staged rows
};
template <int R>
__device__ __forceinline__ Planes16Unit planes16_unit(const PoolBwdPlanes16& t, uint32_t u) {
    constexpr int HR = (R - 1) / 2;
    Planes16Unit b;
    const uint32_t plane = t.div_bands.div(u), band = u - plane * t.div_bands.d;
    b.n = t.div_c.div(plane), b.c = plane - b.n * t.div_c.d;
    b.cr0 = static_cast<int>(band) * t.kb, b.cr1 = min(b.cr0 + t.kb, t.cells_h);
    b.xr0 = (b.cr0 - HR) * 2 - t.p.ph;
    b.rows = (b.cr1 - 1 - (b.cr0 - HR)) * 2 + R;
    return b;
}

// Elements iw0 .. iw0 + 7 of row ih of the plane at xp as raw 16-bit values, NaN outside it.
template <class T>
__device__ __forceinline__ uint4 planes16_load(const char* xp, const Pool2d& p, int ih, int iw0, bool vec) {
    constexpr uint32_t kNan = Half2Of<T>::kNan & 0xffffu;
    if (ih < 0 || ih >= p.h || iw0 + kPlanesG16 <= 0 || iw0 >= p.w) {  // wholly outside: no loads
        const uint32_t w = kNan * 0x10001u;
        return make_uint4(w, w, w, w);
    }
    const char* row = xp + static_cast<uint32_t>(ih) * p.xs[2] * 2u;
    if (vec && iw0 >= 0 && iw0 + kPlanesG16 <= p.w)
        return __ldg(reinterpret_cast<const uint4*>(row + static_cast<uint32_t>(iw0) * 2u));
    uint32_t h[kPlanesG16];
#pragma unroll
    for (int e = 0; e < kPlanesG16; ++e) {
        const int iw = iw0 + e;
        h[e] = iw >= 0 && iw < p.w ? *reinterpret_cast<const uint16_t*>(row + static_cast<uint32_t>(iw) * p.xs[3] * 2u)
                                   : kNan;
    }
    return make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
}

template <class T, int R, int S, int PAR>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_planes16(PoolBwdPlanes16 t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                      float alpha, float beta) {
    constexpr int HR = (R - 1) / 2, HS = (S - 1) / 2, kClasses = (HR + 1) * (HS + 1), G = kPlanesG16;
    constexpr int NP = ColPairs<S, PAR>::NP;
    extern __shared__ __align__(16) unsigned char pool_smem[];
    const Pool2d& p = t.p;
    uint4* xs = reinterpret_cast<uint4*>(pool_smem);  // [staged row][pitch / G]
    const uint32_t* xw = reinterpret_cast<const uint32_t*>(pool_smem);
    const int wpitch = t.pitch / 2;  // staged row pitch in 4-byte words
    float* acc = reinterpret_cast<float*>(pool_smem + static_cast<size_t>(t.srows) * t.pitch * 2);
    const uint32_t xg = t.div_xg.d;
    auto plane_x = [&](const Planes16Unit& b) {
        return reinterpret_cast<const char*>(x + (static_cast<size_t>(b.n) * p.xs[0] +
                                                  static_cast<size_t>(b.c) * p.xs[1]));
    };
    // Staging group l of unit b: row l / xg, elements from column (l % xg - 1) * G.
    auto stage_load = [&](const Planes16Unit& b, const char* xp, uint32_t l) {
        const uint32_t r = t.div_xg.div(l), g = l - r * xg;
        return planes16_load<T>(xp, p, b.xr0 + static_cast<int>(r), (static_cast<int>(g) - 1) * G, t.vec_x);
    };
    uint4 pre[kPlanes16Pre];
    // f(k, l) for this thread's prefetched staging groups l < nx.
    auto each_pre = [&](uint32_t nx, auto f) {
#pragma unroll
        for (int k = 0; k < kPlanes16Pre; ++k) {
            const uint32_t l = threadIdx.x + k * kThreads;
            if (l < nx) f(k, l);
        }
    };
    auto prefetch = [&](uint32_t u) {
        const Planes16Unit b = planes16_unit<R>(t, u);
        const char* xp = plane_x(b);
        each_pre(static_cast<uint32_t>(b.rows) * xg, [&](int k, uint32_t l) { pre[k] = stage_load(b, xp, l); });
    };
    // Thread (rg, pw) takes the window pairs of columns 2 pw, 2 pw + 1, rows o0 + rg + k * nrg.
    const int rg = static_cast<int>(t.div_pw.div(threadIdx.x)), pw = static_cast<int>(threadIdx.x) - rg * t.pairs_w;
    const int w0 = 2 * pw, ws = 2 * w0 - p.pw;  // window 2 pw starts at column ws, 2 pw + 1 at ws + 2
    const bool has_b = w0 + 1 < p.ow;
    // The first in-range column of each window (S: none).
    const int s0 = max(0, -ws), s1 = max(0, -(ws + 2));
    const int f0 = s0 < S && ws + s0 < p.w ? s0 : S, f1 = s1 < S && ws + 2 + s1 < p.w ? s1 : S;
    if (blockIdx.x < t.units) prefetch(blockIdx.x);
    for (uint32_t u = blockIdx.x; u < t.units; u += gridDim.x) {
        const Planes16Unit b = planes16_unit<R>(t, u);
        {
            const char* xp = plane_x(b);
            const uint32_t nx = static_cast<uint32_t>(b.rows) * xg;
            each_pre(nx, [&](int k, uint32_t l) { xs[l] = pre[k]; });
            for (uint32_t l = threadIdx.x + kPlanes16Pre * kThreads; l < nx; l += kThreads)
                xs[l] = stage_load(b, xp, l);
        }
        const uint32_t na = static_cast<uint32_t>(b.rows * t.apitch / 4);
        for (uint32_t l = threadIdx.x; l < na; l += kThreads)
            reinterpret_cast<float4*>(acc)[l] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        if (u + gridDim.x < t.units) prefetch(u + gridDim.x);
        const int o0 = max(0, b.cr0 - HR), o1 = min(p.oh, b.cr1);  // window rows
        const T* drow = dy + (static_cast<size_t>(b.n) * p.ys[0] + static_cast<size_t>(b.c) * p.ys[1] +
                              static_cast<uint32_t>(o0 + rg) * p.ys[2] + static_cast<uint32_t>(w0) * p.ys[3]);
        const uint32_t dstep = static_cast<uint32_t>(t.nrg) * p.ys[2];
        // Row 0 of window pair k: the word holding column ws - PAR (even staged index).
        const uint32_t* wrow = xw + ((o0 + rg) * 2 - p.ph - b.xr0) * wpitch + (ws - PAR + G) / 2;
        const int wstep = 2 * t.nrg * wpitch;
        int pos[kPlanes16Win][2], cls[kPlanes16Win];  // accumulator index of each argmax (-1: none); class of the left
        float dv[kPlanes16Win][2];
#pragma unroll
        for (int k = 0; k < kPlanes16Win; ++k, drow += dstep, wrow += wstep) {
            const int oh = o0 + rg + k * t.nrg;
            pos[k][0] = pos[k][1] = -1;
            cls[k] = 0;
            dv[k][0] = dv[k][1] = 0.0f;
            if (rg >= t.nrg || oh >= o1) continue;
            const int hs = oh * 2 - p.ph;
            uint32_t v2[R * S];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                uint32_t v[NP];
#pragma unroll
                for (int q = 0; q < NP; ++q) v[q] = wrow[r * wpitch + q];
                v2[r * S + 0] = window_pos<PAR, 0>(v);
                v2[r * S + 1] = window_pos<PAR, 1>(v);
                if constexpr (S == 3) v2[r * S + 2] = window_pos<PAR, 2>(v);
            }
            const uint32_t apk = pair_argmax<T, R, S>(v2, hs, p.h, f0, f1);
            const int a0 = static_cast<int>(apk & 0xffffu), a1 = static_cast<int>(apk >> 16);
            const int rbase = (hs - b.xr0) * t.apitch + ws;
            if (a0 != kNoArg) pos[k][0] = rbase + (a0 / S) * t.apitch + a0 % S;
            if (has_b && a1 != kNoArg) pos[k][1] = rbase + (a1 / S) * t.apitch + 2 + a1 % S;
            dv[k][0] = Io<T>::in(drow[0]);
            if (has_b) dv[k][1] = Io<T>::in(drow[p.ys[3]]);
            cls[k] = (oh & HR) * (HS + 1);
        }
        // Window 2 pw is of column class 0, 2 pw + 1 of class HS.
#pragma unroll
        for (int q = 0; q < kClasses; ++q) {
#pragma unroll
            for (int k = 0; k < kPlanes16Win; ++k)
#pragma unroll
                for (int j = 0; j < 2; ++j)
                    if (pos[k][j] >= 0 && cls[k] + (j & HS) == q) acc[pos[k][j]] += dv[k][j];
            __syncthreads();
        }
        const int dh0 = max(0, b.cr0 * 2 - p.ph), dh1 = min(p.h, b.cr1 * 2 - p.ph);
        char* op = reinterpret_cast<char*>(dx + (static_cast<size_t>(b.n) * p.zs[0] +
                                                 static_cast<size_t>(b.c) * p.zs[1]));
        const uint32_t nd = static_cast<uint32_t>(max(0, dh1 - dh0)) * t.div_ag.d;
        for (uint32_t l = threadIdx.x; l < nd; l += kThreads) {
            const uint32_t r = t.div_ag.div(l), g = l - r * t.div_ag.d;
            const int ih = dh0 + static_cast<int>(r), iw0 = static_cast<int>(g) * G;
            const float4* a = reinterpret_cast<const float4*>(acc + (ih - b.xr0) * t.apitch + iw0);
            const float4 lo = a[0], hi = a[1];
            float v[G] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
            char* orow = op + static_cast<uint32_t>(ih) * p.zs[2] * 2u;
            if (t.vec_dx && iw0 + G <= p.w) {
                blend_store<T, G>(reinterpret_cast<T*>(orow + static_cast<uint32_t>(iw0) * 2u), v, alpha, beta);
            } else {
#pragma unroll
                for (int e = 0; e < G; ++e)
                    if (iw0 + e < p.w)
                        blend_store<T, 1>(reinterpret_cast<T*>(orow + static_cast<uint32_t>(iw0 + e) * p.zs[3] * 2u),
                                          &v[e], alpha, beta);
            }
        }
        __syncthreads();  // the next unit stages over these rows
    }
}

// The band plan of pool_bwd_planes16; false when the problem is not for it (NaN
// propagation, a left pad over the staged border, rows of over kThreads window pairs) or
// one cell row's band does not fit.
template <int R, int S, int PAR>
bool plan_bwd_planes16(const core::PoolingBwdProblem& pb, const Pool2d& p, PoolBwdPlanes16* t, size_t* smem) {
    constexpr int HR = (R - 1) / 2, G = kPlanesG16, NP = ColPairs<S, PAR>::NP;
    if (p.prop || p.pw + PAR > G || p.ow < 1) return false;
    t->p = p;
    t->pairs_w = (p.ow + 1) / 2;
    if (t->pairs_w > kThreads) return false;
    t->cells_h = (p.h - 1 + p.ph) / 2 + 1;
    // The last pair reads staged elements up to 4 (pairs_w - 1) - pad - PAR + G + 2 NP - 1.
    const int need = std::max(G + p.w, 4 * (t->pairs_w - 1) - p.pw - PAR + G + 2 * NP);
    t->pitch = (need + G - 1) / G * G;
    t->apitch = (p.w + G - 1) / G * G;
    t->nrg = kThreads / t->pairs_w;
    auto rows = [&](int kb) { return (kb - 1 + HR) * 2 + R; };
    auto bytes = [&](int kb) {
        return static_cast<size_t>(rows(kb)) * static_cast<size_t>(t->pitch * 2 + t->apitch * 4);
    };
    if (!plan_bands(pb, p, HR, kPlanes16Win, G, bytes, t, smem)) return false;
    t->srows = rows(t->kb);
    t->div_pw = FastDiv(static_cast<uint32_t>(t->pairs_w));
    return true;
}

// Launches pool_bwd_planes16 on a persistent grid (the blocks that fit the GPU at once).
// A persistent launch of a 16-bit max-backward kernel taking (t, x, dy, dx, alpha, beta):
// as many blocks of `threads` as run at once on the device, at most `units`.
template <class T, class Params>
Status launch_persistent_bwd(const core::Handle& h, const core::PoolingBwdProblem& pb,
                             void (*kernel)(Params, const T*, const T*, T*, float, float), const Params& t,
                             uint32_t units, int threads, size_t smem) {
    int per_sm = 0;
    ODNN_RETURN_IF_ERROR(cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem),
                                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
    const uint32_t grid = std::min<uint32_t>(units, static_cast<uint32_t>(std::max(per_sm, 1) * sm_count()));
    kernel<<<grid, threads, smem, h.stream>>>(t, static_cast<const T*>(pb.x_data), static_cast<const T*>(pb.dy_data),
                                              static_cast<T*>(pb.dx_data), static_cast<float>(pb.out.alpha),
                                              static_cast<float>(pb.out.beta));
    return launched("cuda_pooling_bwd");
}

template <class T, int R, int S, int PAR>
Status launch_bwd_planes16(const core::Handle& h, const core::PoolingBwdProblem& pb, const PoolBwdPlanes16& t,
                           size_t smem) {
    if (t.units == 0) return Status::ok();
    return launch_persistent_bwd<T>(h, pb, pool_bwd_planes16<T, R, S, PAR>, t, t.units, kThreads, smem);
}

// pool_bwd_planes16 launched for the problem (*taken), or not taken by its plan.
template <class T, int R, int S>
Status bwd_planes16(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p, bool* taken) {
    PoolBwdPlanes16 t;
    size_t smem = 0;
    *taken = true;
    if (p.pw % 2) {
        if (plan_bwd_planes16<R, S, 1>(pb, p, &t, &smem)) return launch_bwd_planes16<T, R, S, 1>(h, pb, t, smem);
    } else if (plan_bwd_planes16<R, S, 0>(pb, p, &t, &smem)) {
        return launch_bwd_planes16<T, R, S, 0>(h, pb, t, smem);
    }
    *taken = false;
    return Status::ok();
}

// Max backward, HALF / BFLOAT16 skipping NaNs, W innermost: pool_bwd_strips with two
// window columns a lane. dx columns are cut into aligned pairs (2a, 2a + 1), one 4-byte
// store a dx row; pair a's windows are columns a + h - HSP .. a + h (h = (pad + 1) / 2,
// HSP = (S - 1 + PAR) / 2: 3x3 two windows, 2x2 one at even pad, two at odd), and its
// element dj sits at column dj + 2 * (HSP - B) - PAR of the B-th (cell_gather's rule
// with the cell start moved from 2 * ow - pad to the even column below it). Lane l of a
// group of G lanes computes windows 2 * jw and 2 * jw + 1 (jw = seg * (G - HSP) - HSP + l;
// lane 0 a halo when HSP = 1) and owns dx pairs 2 * jw - h and the next; the window left of its
// pair comes from lane l - 1 by a shuffle, the row above is carried, as in
// pool_bwd_strips. Both windows' argmax in one packed chain: their positions are PRMT'ed
// pairs of the loaded column pairs, out-of-range positions are OR'ed to NaN, the max is
// max.bf16x2 (skipping NaNs), and the first position equal to it a set.eq mask and a
// LOP3 a position for both windows (window_argmax's rule: ties keep the first, a window
// of NaNs gives its first position, kNoArg for none). dy is read element by element.
// Bytes: x + dy + dx (+ dx if beta != 0).
// A row of window pairs narrower than a warp takes a group of 8 or 16 lanes, several
// planes a warp (W = 56: 15 lanes and the halo; 32 would leave half the warp idle), and
// strips are up to 16 cell rows, cut evenly (56 rows: 2 strips of 15, 7% halo rows).
// Ceilings at 128x256x56x56 bf16: 462 MB -> 0.110 ms (the bench's 2x + 2y: 111% of
// copy); pool_bwd_strips<bf16> issued ~300 instructions a window (0.33 ms, 37% of copy,
// as FLOAT's strips at 72%: instruction-bound), this ~135 (SASS: ~270 a row of two
// windows, beta = 0): predicted ~80% of copy, still instruction-bound.
struct PoolBwdPairs {
    Pool2d p;
    int cells_h, pairs_w, k, segs;  // pairs_w: window pairs a row (lanes that own dx); k: cell rows a strip
    int lg;                         // lanes a group: 1 << lg (8, 16 or 32), 32 >> lg planes a warp
    uint32_t planes;                // N * C
    FastDiv div_segs, div_strips, div_c;
    uint32_t warps;
};

template <class T, int R, int S, int PAR>
__global__ void __launch_bounds__(kThreads)
    pool_bwd_pairs(PoolBwdPairs t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                   float alpha, float beta) {
    constexpr int HR = (R - 1) / 2, HSP = (S - 1 + PAR) / 2;
    static_assert(HR <= 1 && HSP <= 1, "one halo row / window");
    using Cols = ColPairs<S, PAR>;
    constexpr int NP = Cols::NP;
    constexpr uint32_t kNone = kNoArg * 0x10001u;
    const Pool2d& p = t.p;
    const int gl = 1 << t.lg;  // lanes a group
    const int lane = static_cast<int>(threadIdx.x & (gl - 1)), group = static_cast<int>((threadIdx.x & 31) >> t.lg);
    const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
    const int h = (p.pw + 1) >> 1, wp = p.w >> 1;
    const uint32_t xs2 = p.xs[2] * static_cast<uint32_t>(sizeof(T));
    const uint32_t zs2 = p.zs[2] * static_cast<uint32_t>(sizeof(T));
    for (uint32_t wi = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; wi < t.warps; wi += stride) {
        // wi = (pack * strips + strip) * segs + seg; group g of the warp takes plane
        // pack * (32 >> lg) + g (a warp's groups share strip and segment: uniform loops).
        const uint32_t q = t.div_segs.div(wi), seg_u = wi - q * t.div_segs.d;
        const uint32_t pack = t.div_strips.div(q), strip_u = q - pack * t.div_strips.d;
        const uint32_t plane = (pack << (5 - t.lg)) + static_cast<uint32_t>(group);
        const bool valid = plane < t.planes;  // else: a clamped plane, nothing written
        const uint32_t pc = valid ? plane : t.planes - 1, n = t.div_c.div(pc), c = pc - n * t.div_c.d;
        const int jw = static_cast<int>(seg_u) * (gl - HSP) - HSP + lane;
        const int w0 = 2 * jw, a0 = w0 - h;  // windows w0, w0 + 1; dx pairs a0, a0 + 1
        const bool owns = valid && lane >= HSP && jw < t.pairs_w;
        // Per half: whether the window exists (lane 0's left windows may not).
        const uint32_t wok =
            opaque((w0 >= 0 && w0 < p.ow ? 0xffffu : 0u) | (w0 + 1 >= 0 && w0 + 1 < p.ow ? 0xffff0000u : 0u));
        // dy column offsets of the windows; dx byte offsets of the pairs this lane writes, or
        // ~0u for none (outside the row, or not this lane's).
        const uint32_t dyc0 = opaque(static_cast<uint32_t>(w0) * p.ys[3]);
        uint32_t dxc[2];
#pragma unroll
        for (int e = 0; e < 2; ++e)
            dxc[e] = opaque(owns && a0 + e >= 0 && a0 + e < wp ? static_cast<uint32_t>(a0 + e) * 4u : ~0u);
        const int ws = w0 * 2 - p.pw;
        const Cols cols(ws, p.w);
        uint32_t coff[NP], cnan[NP];
#pragma unroll
        for (int k = 0; k < NP; ++k) {
            coff[k] = opaque(cols.off[k]);
            cnan[k] = opaque(cols.ok[k] ? 0u : Half2Of<T>::kNan);
        }
        // The first in-range column of each window (S: none).
        const int s0 = max(0, -ws), s1 = max(0, -(ws + 2));
        const int f0 = static_cast<int>(opaque(s0 < S && ws + s0 < p.w ? s0 : S));
        const int f1 = static_cast<int>(opaque(s1 < S && ws + 2 + s1 < p.w ? s1 : S));
        const int cr0 = static_cast<int>(strip_u) * t.k, cr1 = min(cr0 + t.k, t.cells_h);
        const char* xb = reinterpret_cast<const char*>(x + n * p.xs[0] + c * p.xs[1]);
        const T* dyp = dy + (n * p.ys[0] + c * p.ys[1] + dyc0);  // window w0's dy column
        char* ob = reinterpret_cast<char*>(dx + n * p.zs[0] + c * p.zs[1]);
        // Windows of the current row (HR) and the row above (0): slot 0 the left lane's
        // second window, 1 and 2 this lane's.
        int arg[HR + 1][3];
        float dv[HR + 1][3];
#pragma unroll
        for (int a = 0; a < HR + 1; ++a)
#pragma unroll
            for (int b = 0; b < 3; ++b) {
                arg[a][b] = kNoArg;
                dv[a][b] = 0.0f;
            }
        for (int cr = cr0 - HR; cr < cr1; ++cr) {  // the same trip count in every lane
            uint32_t apk = kNone;                  // the two windows' argmax, packed
            float d0 = 0.0f, d1 = 0.0f;
            if (cr >= 0 && cr < p.oh) {  // warp-uniform
                const int hs = cr * 2 - p.ph;
                uint32_t pos[R * S];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const int ih = hs + r;
                    const uint32_t rnan = ih >= 0 && ih < p.h ? 0u : Half2Of<T>::kNan;
                    const char* xr = xb + static_cast<uint32_t>(min(max(ih, 0), p.h - 1)) * xs2;
                    uint32_t v[NP];
#pragma unroll
                    for (int k = 0; k < NP; ++k) v[k] = ld_u32(xr + coff[k]) | rnan | cnan[k];
                    pos[r * S + 0] = window_pos<PAR, 0>(v);
                    pos[r * S + 1] = window_pos<PAR, 1>(v);
                    if constexpr (S == 3) pos[r * S + 2] = window_pos<PAR, 2>(v);
                }
                apk = pair_argmax<T, R, S>(pos, hs, p.h, f0, f1);
                apk = (apk & wok) | (kNone & ~wok);
                const T* dr = dyp + static_cast<uint32_t>(cr) * p.ys[2];
                if (wok & 0xffffu) d0 = Io<T>::in(dr[0]);
                if (wok >> 16) d1 = Io<T>::in(dr[p.ys[3]]);
            }
            if (HR == 1) {
#pragma unroll
                for (int b = 0; b < 3; ++b) {
                    arg[0][b] = arg[HR][b];
                    dv[0][b] = dv[HR][b];
                }
            }
            arg[HR][1] = static_cast<int>(apk & 0xffffu);
            arg[HR][2] = static_cast<int>(apk >> 16);
            dv[HR][1] = d0;
            dv[HR][2] = d1;
            if (HSP == 1) {
                arg[HR][0] = static_cast<int>(__shfl_up_sync(0xffffffffu, apk, 1, gl) >> 16);
                dv[HR][0] = __shfl_up_sync(0xffffffffu, d1, 1, gl);
            }
            if (cr < cr0 || (dxc[0] & dxc[1]) == ~0u) continue;
            // dx rows 2 cr - ph + di of pairs a0 + e: each element gathers the windows that
            // chose it, in output order (rows A, then columns B), as cell_gather.
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (dxc[e] == ~0u) continue;
#pragma unroll
                for (int di = 0; di < 2; ++di) {
                    const int ih = cr * 2 - p.ph + di;
                    if (ih < 0 || ih >= p.h) continue;
                    float acc[2] = {0.0f, 0.0f};
#pragma unroll
                    for (int A = 0; A < HR + 1; ++A)
#pragma unroll
                        for (int B = 0; B < HSP + 1; ++B) {
                            const int lr = di + (HR - A) * 2;
                            if (lr >= R) continue;
                            const int slot = e + 1 - HSP + B;
#pragma unroll
                            for (int dj = 0; dj < 2; ++dj) {
                                const int lc = dj + (HSP - B) * 2 - PAR;
                                if (lc < 0 || lc >= S) continue;
                                if (arg[A][slot] == lr * S + lc) acc[dj] += dv[A][slot];
                            }
                        }
                    blend_pair<T>(ob + (static_cast<uint32_t>(ih) * zs2 + dxc[e]), acc[0], acc[1], alpha, beta);
                }
            }
        }
    }
}

template <class T, int R, int S, int PAR>
Status launch_bwd_pairs(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    constexpr int HSP = (S - 1 + PAR) / 2;
    PoolBwdPairs t;
    t.p = p;
    t.cells_h = (p.h - 1 + p.ph) / 2 + 1;
    // dx pair a (< W / 2) belongs to the lane of windows 2 jw, 2 jw + 1 with jw = (a + h) / 2.
    t.pairs_w = (p.w / 2 - 1 + (p.pw + 1) / 2) / 2 + 1;
    // The narrowest group of lanes that holds a row (W = 56: 15 lanes + the halo, 16: two
    // planes a warp instead of half a warp idle), else segments of 32.
    t.lg = 5;
    for (int lg = 3; lg < 5; ++lg)
        if ((1 << lg) - HSP >= t.pairs_w) {
            t.lg = lg;
            break;
        }
    t.segs = (t.pairs_w + (1 << t.lg) - HSP - 1) / ((1 << t.lg) - HSP);
    // Strips of at most 16 cell rows, as even as the height allows (the halo row a strip
    // recomputes: 56 rows, 29 cell rows in 2 strips of 15: 7%).
    const int strips = (t.cells_h + 15) / 16;
    t.k = (t.cells_h + strips - 1) / strips;
    const int nstrips = (t.cells_h + t.k - 1) / t.k;
    t.planes = static_cast<uint32_t>(p.n) * static_cast<uint32_t>(p.c);
    const int64_t packs = (static_cast<int64_t>(p.n) * p.c + (32 >> t.lg) - 1) / (32 >> t.lg);
    const int64_t warps = packs * nstrips * t.segs;
    if (warps == 0) return Status::ok();
    if (warps * 32 >= (int64_t{1} << 32))
        return core::make_status(CUDNN_STATUS_NOT_SUPPORTED,
                                 "cudnnPoolingBackward: dx (n=%d c=%d h=%d w=%d) needs %lld threads, over 2^32", p.n,
                                 p.c, p.h, p.w, static_cast<long long>(warps * 32));
    t.warps = static_cast<uint32_t>(warps);
    t.div_segs = FastDiv(static_cast<uint32_t>(t.segs));
    t.div_strips = FastDiv(static_cast<uint32_t>(nstrips));
    t.div_c = FastDiv(static_cast<uint32_t>(p.c));
    pool_bwd_pairs<T, R, S, PAR><<<grid_for(warps * 32), kThreads, 0, h.stream>>>(
        t, static_cast<const T*>(pb.x_data), static_cast<const T*>(pb.dy_data), static_cast<T*>(pb.dx_data),
        static_cast<float>(pb.out.alpha), static_cast<float>(pb.out.beta));
    return launched("cuda_pooling_bwd");
}

// The pair kernels' layout rule for a 4-D tensor: W stride 1, the other strides even,
// W even, the pointer 4-byte aligned (every column pair an aligned 4-byte word in a row).
inline bool pairs_fit(const TensorDesc& t, const void* ptr) {
    return t.strides[3] == 1 && t.strides[0] % 2 == 0 && t.strides[1] % 2 == 0 && t.strides[2] % 2 == 0 &&
           t.dims[3] % 2 == 0 && aligned_to(ptr, 4);
}

// Max backward, HALF / BFLOAT16 skipping NaNs, W innermost, 3x3 / 2x2 at stride 2, whole
// (H, W) planes through shared memory in a cp.async pipeline (pool_bwd_stream16). The
// pair and band kernels above wait on their loads: a warp of pool_bwd_pairs holds ~0.5
// KiB of a row's loads in flight, ~20-35 KiB an SM, about what the H200's bandwidth-delay
// product asks for (Nsight: 58% of warp cycles on long scoreboard; 56% of copy), and the
// bands took ~4 us a unit for ~1 us of issue. Here a block's threads copy the x and dy
// planes of its next kStreamStages - 1 planes (persistent grid, planes blockIdx.x +
// k * gridDim.x) while it computes the current one: 2 x 8.7 KiB in flight a block at
// 56x56, bounded by shared memory, not registers. A plane:
//   stage    x rows at a pitch with NaN rows above and below and NaN columns left and
//            right (written once, never copied over: windows need no bounds arithmetic),
//            dy as its contiguous plane;
//   windows  two adjacent window columns a thread in one packed chain (pool_bwd_pairs'
//            column pairs and pair_argmax), each window's record (its dy's 16 bits over
//            its argmax position, kNoArg for none) into a table with a border of kNoArg
//            records;
//   gather   a thread takes a cell row (dx rows 2 ci - ph, + 1) of two aligned dx column
//            pairs: the six records of the windows that cover them, each element adding
//            the dy of the windows whose argmax it is in output order (cell_gather's
//            rule; pool_bwd_pairs' slots), one 8-byte store a dx row where dx rows are
//            8-byte aligned, else two 4-byte ones (blend_quad / blend_pair: alpha, beta).
// Two barriers a plane; a block has as many threads as do each phase in even rounds (up
// to kStreamMaxThreads; 416 at 56x56). Needs x rows in whole 4-byte copies (W even, row and plane
// strides and the pointer aligned), each dy plane contiguous in whole 4-byte copies, dx in
// aligned pairs (pairs_fit). Bytes: x + dy + dx (+ dx if beta != 0).
// Ceilings at 128x256x56x56 bf16: 462 MB -> 0.110 ms at 4.2 TB/s (the bench's 2x + 2y:
// 111% of copy); SASS: ~100 instructions a window pair, ~110 a gather item (two column
// pairs, 8 dx), ~3 K warp instructions a plane, ~100 M -> ~0.095 ms at one a cycle a
// scheduler. Predicted ~0.13-0.14 ms; measured 0.216 ms on the H200 (pool_bwd_pairs
// 0.227) and 0.242 ms on the H100 (0.273), faster than the pairs at every measured
// 16-bit shape but one (docs/PERFORMANCE.md). Nsight (H200): DRAM 44%, SM 77%, a third of
// warp cycles at the barriers: issue- and barrier-bound, not waiting on memory (four
// stages measured no faster).
constexpr int kStreamStages = 3;
constexpr size_t kStreamSmem = 200 * 1024;  // a block's stages and records at most
constexpr int kStreamMaxThreads = 512;

struct PoolBwdStream {
    Pool2d p;
    uint32_t planes;           // N * C
    int xchunk, dchunk;        // copy sizes: 16, 8 or 4 bytes
    int pitch, top, left;      // staged x: row pitch in elements, NaN rows above, NaN columns left
    int srows;                 // staged x rows, borders included
    uint32_t doff, stage;      // dy's byte offset in a stage (16-aligned), a stage's bytes
    uint32_t dbytes, xcopies;  // a dy plane's bytes; x copies a plane (H x copies a row)
    int rpitch;                // record row pitch: a border record left and right
    int pairs_w, wp, items_w;  // window pairs a window row; dx column pairs a row; gather items a cell row
    int hp;                    // pad / 2: cell column wq + hp holds dx columns 2 wq, 2 wq + 1 (PAR 0)
    bool dx8;                  // dx rows in aligned 8-byte groups: one store a gather item's row
    uint32_t npairs, nitems;   // window pairs, gather items (cell rows x items_w) a plane
    FastDiv div_c, div_pairs, div_items, div_xrow;  // div_xrow: x copies a row
};

// n copies of C bytes from src (rows of per_row.d copies, spitch bytes apart) to the
// shared-memory address dst (rows dpitch bytes apart), spread over the block's threads.
template <int C>
__device__ __forceinline__ void stream_rows(uint32_t dst, uint32_t dpitch, const char* src, uint32_t spitch,
                                            uint32_t n, const FastDiv& per_row) {
    for (uint32_t l = threadIdx.x; l < n; l += blockDim.x) {
        const uint32_t r = per_row.div(l), k = (l - r * per_row.d) * C;
        cp_async<C>(dst + r * dpitch + k, src + r * spitch + k);
    }
}
// bytes from src to the shared-memory address dst in copies of C bytes.
template <int C>
__device__ __forceinline__ void stream_flat(uint32_t dst, const char* src, uint32_t bytes) {
    for (uint32_t o = threadIdx.x * C; o < bytes; o += blockDim.x * C) cp_async<C>(dst + o, src + o);
}
// f(std::integral_constant<int, c>) for c = 16, 8 or 4.
template <class F>
__device__ __forceinline__ void with_chunk(int c, F&& f) {
    if (c == 16)
        f(std::integral_constant<int, 16>{});
    else if (c == 8)
        f(std::integral_constant<int, 8>{});
    else
        f(std::integral_constant<int, 4>{});
}

template <class T, int R, int S, int PAR>
__global__ void __launch_bounds__(kStreamMaxThreads)
    pool_bwd_stream16(PoolBwdStream t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                      float alpha, float beta) {
    constexpr int NP = ColPairs<S, PAR>::NP;
    constexpr uint32_t kNan = Half2Of<T>::kNan;
    extern __shared__ __align__(16) unsigned char pool_smem[];
    const Pool2d& p = t.p;
    uint32_t* rec = reinterpret_cast<uint32_t*>(pool_smem + kStreamStages * t.stage);  // [OH + 2][rpitch]
    {
        // NaN over every stage's staged x (the borders stay), kNoArg over the records (the
        // border stays; the inside is written every plane), before any copy lands.
        const uint32_t xw = static_cast<uint32_t>(t.srows * t.pitch / 2);
        for (uint32_t l = threadIdx.x; l < kStreamStages * xw; l += blockDim.x) {
            const uint32_t s = l / xw;
            reinterpret_cast<uint32_t*>(pool_smem + s * t.stage)[l - s * xw] = kNan;
        }
        const uint32_t nrec = static_cast<uint32_t>((p.oh + 2) * t.rpitch);
        for (uint32_t l = threadIdx.x; l < nrec; l += blockDim.x) rec[l] = kNoArg;
        __syncthreads();
    }
    const uint32_t sbase = static_cast<uint32_t>(__cvta_generic_to_shared(pool_smem));
    const uint32_t xpitch = static_cast<uint32_t>(t.pitch) * 2u;  // staged row, bytes
    // Copies plane q's x and dy into stage s (none past the last plane), one commit group.
    auto issue = [&](uint32_t q, int s) {
        if (q < t.planes) {
            const uint32_t n = t.div_c.div(q), c = q - n * t.div_c.d;
            const size_t n64 = n, c64 = c;
            const char* xp = reinterpret_cast<const char*>(x + (n64 * p.xs[0] + c64 * p.xs[1]));
            const char* dp = reinterpret_cast<const char*>(dy + (n64 * p.ys[0] + c64 * p.ys[1]));
            const uint32_t st = sbase + static_cast<uint32_t>(s) * t.stage;
            const uint32_t x0 = st + static_cast<uint32_t>(t.top) * xpitch + static_cast<uint32_t>(t.left) * 2u;
            with_chunk(t.xchunk, [&](auto c) {
                stream_rows<decltype(c)::value>(x0, xpitch, xp, p.xs[2] * 2u, t.xcopies, t.div_xrow);
            });
            with_chunk(t.dchunk, [&](auto c) { stream_flat<decltype(c)::value>(st + t.doff, dp, t.dbytes); });
        }
        cp_async_commit();
    };
#pragma unroll
    for (int s = 0; s < kStreamStages - 1; ++s) issue(blockIdx.x + s * gridDim.x, s);
    int s = 0;
    for (uint32_t q = blockIdx.x; q < t.planes; q += gridDim.x) {
        cp_async_wait<kStreamStages - 2>();  // this thread's copies of plane q
        __syncthreads();                     // everyone's; and the stage of plane q - grid is free
        issue(q + (kStreamStages - 1) * gridDim.x, s == 0 ? kStreamStages - 1 : s - 1);
        const char* xb = reinterpret_cast<const char*>(pool_smem) + static_cast<uint32_t>(s) * t.stage;
        const uint16_t* ds = reinterpret_cast<const uint16_t*>(xb + t.doff);
        for (uint32_t l = threadIdx.x; l < t.npairs; l += blockDim.x) {
            const int i = static_cast<int>(t.div_pairs.div(l)), w0 = 2 * (static_cast<int>(l) - i * t.pairs_w);
            const int hs = i * 2 - p.ph, ws = w0 * 2 - p.pw;
            // Row 0 of the windows, from the column pair holding column ws - PAR.
            const char* xr = xb + (static_cast<uint32_t>(hs + t.top) * xpitch +
                                   static_cast<uint32_t>(ws - PAR + t.left) * 2u);
            const int s0 = max(0, -ws), s1 = max(0, -(ws + 2));
            const int f0 = s0 < S && ws + s0 < p.w ? s0 : S, f1 = s1 < S && ws + 2 + s1 < p.w ? s1 : S;
            uint32_t pos[R * S];
#pragma unroll
            for (int r = 0; r < R; ++r, xr += xpitch) {
                uint32_t v[NP];
#pragma unroll
                for (int k = 0; k < NP; ++k) v[k] = ld_u32(xr + 4 * k);
                pos[r * S + 0] = window_pos<PAR, 0>(v);
                pos[r * S + 1] = window_pos<PAR, 1>(v);
                if constexpr (S == 3) pos[r * S + 2] = window_pos<PAR, 2>(v);
            }
            const uint32_t apk = pair_argmax<T, R, S>(pos, hs, p.h, f0, f1);
            const uint16_t* dr = ds + i * p.ow + w0;
            uint32_t* rr = rec + (i + 1) * t.rpitch + w0 + 1;
            rr[0] = static_cast<uint32_t>(dr[0]) << 16 | (apk & 0xffffu);
            if (w0 + 1 < p.ow) rr[1] = static_cast<uint32_t>(dr[1]) << 16 | apk >> 16;
        }
        __syncthreads();
        const uint32_t n = t.div_c.div(q), c = q - n * t.div_c.d;
        char* ob = reinterpret_cast<char*>(dx + (static_cast<size_t>(n) * p.zs[0] + static_cast<size_t>(c) * p.zs[1]));
        const uint32_t zs2 = p.zs[2] * 2u;
        for (uint32_t l = threadIdx.x; l < t.nitems; l += blockDim.x) {
            const int ci = static_cast<int>(t.div_items.div(l)), wq0 = 2 * (static_cast<int>(l) - ci * t.items_w);
            // Column 2 wq + e lies in cell column wq + hp + (e + PAR) / 2 (hp = pad / 2) at
            // parity (e + PAR) & 1. Windows (ci - 1 + A, wq0 + hp - 1 + PAR + B) in g[A][B]:
            // rows ci - 1, ci; the window columns left of and at the cells of pairs wq0, wq0 + 1.
            const uint32_t* rr = rec + ci * t.rpitch + wq0 + t.hp + PAR;
            const uint32_t g[2][3] = {{rr[0], rr[1], rr[2]}, {rr[t.rpitch], rr[t.rpitch + 1], rr[t.rpitch + 2]}};
            const int pairs = min(2, t.wp - wq0);
#pragma unroll
            for (int a = 0; a < 2; ++a) {
                const int ih = ci * 2 - p.ph + a;
                if (ih < 0 || ih >= p.h) continue;
                char* orow = ob + (static_cast<uint32_t>(ih) * zs2 + static_cast<uint32_t>(wq0) * 4u);
                float acc[4];  // columns 2 wq0 + 2 k + e
#pragma unroll
                for (int k = 0; k < 2; ++k)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int b = (e + PAR) & 1, cc = (e + PAR) >> 1;
                        acc[2 * k + e] = 0.0f;
#pragma unroll
                        for (int dr = 1; dr >= 0; --dr)
#pragma unroll
                            for (int dc = 1; dc >= 0; --dc) {
                                const int r = 2 * dr + a, sc = 2 * dc + b;
                                if (r >= R || sc >= S) continue;
                                const uint32_t w = g[1 - dr][k + 1 - PAR + cc - dc];
                                if ((w & 0xffffu) == static_cast<uint32_t>(r * S + sc)) acc[2 * k + e] += hi_f<T>(w);
                            }
                    }
                // One 8-byte store a row where dx rows allow (a warp's stores then fill
                // whole sectors; two 4-byte stores 8 bytes apart cost L2 twice: Nsight, H100).
                if (t.dx8 && pairs == 2) {
                    blend_quad<T>(orow, acc, alpha, beta);
                } else {
                    blend_pair<T>(orow, acc[0], acc[1], alpha, beta);
                    if (pairs == 2) blend_pair<T>(orow + 4, acc[2], acc[3], alpha, beta);
                }
            }
        }
        s = s == kStreamStages - 1 ? 0 : s + 1;
    }
}

// The largest copy (16, 8 or 4 bytes) that tiles runs of `run` 16-bit elements of t
// starting at every (n, c) and, with rows, every h (W stride 1); 0 for none.
inline int stream_chunk(const TensorDesc& t, const void* ptr, int64_t run, bool rows) {
    if (t.strides[3] != 1) return 0;
    for (int c = 16; c >= 4; c /= 2)
        if ((run * 2) % c == 0 && (!rows || (t.strides[2] * 2) % c == 0) && (t.strides[1] * 2) % c == 0 &&
            (t.strides[0] * 2) % c == 0 && aligned_to(ptr, static_cast<size_t>(c)))
            return c;
    return 0;
}

// pool_bwd_stream16 launched for the problem (*taken), or not taken: NaN propagation, odd
// W, rows or dy planes not in whole 4-byte copies, dx not in aligned pairs, or planes too
// large for the stages.
template <class T, int R, int S>
Status bwd_stream16(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p, bool* taken) {
    *taken = false;
    if (p.prop || p.w % 2 || p.oh < 1 || p.ow < 1 || !pairs_fit(pb.dx, pb.dx_data)) return Status::ok();
    PoolBwdStream t;
    t.p = p;
    t.xchunk = stream_chunk(pb.x, pb.x_data, p.w, true);
    // dy: one contiguous run a plane, copied whole.
    t.dchunk = pb.dy.strides[2] == p.ow ? stream_chunk(pb.dy, pb.dy_data, int64_t{p.oh} * p.ow, false) : 0;
    const int par = p.pw % 2, np = par ? ColPairs<S, 1>::NP : ColPairs<S, 0>::NP;
    t.left = t.xchunk / 2;  // keeps staged rows aligned to the copies
    if (t.xchunk == 0 || t.dchunk == 0 || p.pw + par > t.left) return Status::ok();
    t.pairs_w = (p.ow + 1) / 2;
    // The last pair reads columns up to 4 (pairs_w - 1) - pw - PAR + 2 NP - 1; its rows up
    // to 2 (OH - 1) - ph + R - 1.
    const int right = std::max(0, 4 * (t.pairs_w - 1) - p.pw - par + 2 * np - p.w);
    t.pitch = t.left + p.w + (right + t.left - 1) / t.left * t.left;
    t.top = p.ph;
    t.srows = t.top + p.h + std::max(0, 2 * (p.oh - 1) - p.ph + R - p.h);
    t.dbytes = static_cast<uint32_t>(p.oh * p.ow * 2);
    t.doff = static_cast<uint32_t>(t.srows * t.pitch * 2 + 15) / 16u * 16u;
    t.stage = (t.doff + t.dbytes + 15u) / 16u * 16u;
    t.rpitch = std::max(p.ow, p.w / 2) + 3;
    const size_t smem = kStreamStages * static_cast<size_t>(t.stage) + static_cast<size_t>(p.oh + 2) * t.rpitch * 4;
    if (smem > kStreamSmem || static_cast<int64_t>(p.n) * p.c >= (int64_t{1} << 31)) return Status::ok();
    *taken = true;
    t.planes = static_cast<uint32_t>(p.n) * static_cast<uint32_t>(p.c);
    if (t.planes == 0) return Status::ok();
    t.wp = p.w / 2;
    t.hp = p.pw / 2;
    t.xcopies = static_cast<uint32_t>(p.h * (p.w * 2 / t.xchunk));
    t.npairs = static_cast<uint32_t>(p.oh * t.pairs_w);
    t.items_w = (t.wp + 1) / 2;
    t.dx8 = pb.dx.strides[0] % 4 == 0 && pb.dx.strides[1] % 4 == 0 && pb.dx.strides[2] % 4 == 0 &&
            aligned_to(pb.dx_data, 8);
    t.nitems = static_cast<uint32_t>(((p.h - 1 + p.ph) / 2 + 1) * t.items_w);
    t.div_c = FastDiv(static_cast<uint32_t>(p.c));
    t.div_pairs = FastDiv(static_cast<uint32_t>(t.pairs_w));
    t.div_items = FastDiv(static_cast<uint32_t>(t.items_w));
    t.div_xrow = FastDiv(static_cast<uint32_t>(p.w * 2 / t.xchunk));
    // Threads: both phases in the fewest rounds, evenly (each round ends at a barrier, so
    // a round of a few busy warps costs a full one: 256 threads over 392 window pairs and
    // 406 gather items at 56x56 left a third of warp cycles at barriers; Nsight, H200).
    const uint32_t work = std::max(t.npairs, t.nitems);
    const uint32_t rounds = (work + kStreamMaxThreads - 1) / kStreamMaxThreads;
    const int threads = static_cast<int>(std::max<uint32_t>(128, ((work + rounds - 1) / rounds + 31) / 32 * 32));
    auto launch = [&](auto kernel) -> Status {
        if (smem > 48 * 1024)
            ODNN_RETURN_IF_ERROR(cuda_status(
                cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
                "cudaFuncSetAttribute"));
        return launch_persistent_bwd<T>(h, pb, kernel, t, t.planes, threads, smem);
    };
    return par ? launch(pool_bwd_stream16<T, R, S, 1>) : launch(pool_bwd_stream16<T, R, S, 0>);
}

// Max backward, HALF / BFLOAT16 skipping NaNs, W innermost, 3x3 at pad 1 and 2x2 at pad 0,
// stride 2, rows of at most 128 columns (pool_bwd_walk16, sm_90). pool_bwd_stream16 spends
// most of its instructions on what is not the pooling: its cp.async copies take ~20
// instructions a 16-byte piece, and each window's record goes to a table and is gathered
// back (~130 instructions a gather item), two barriers a plane. Here:
//   copies   bulk copies (the copy engine does them: one instruction a plane where rows are
//            contiguous, else one a row) of a batch of P planes into a stage in shared
//            memory: x rows at pitch W between NaN rows written once, the dy plane whole.
//            `stages` batches in flight a block, each stage on its own transaction barrier.
//   windows  lane j of a group of G lanes takes window columns 2 j and 2 j + 1 (one packed
//            chain, pair_argmax_from) and walks down their rows, the next row's loads
//            issued before the current row's chain; the window rows of a plane are cut
//            into V segments of `rps` rows, one group each. The x row two window rows
//            share (3x3) stays in registers. Windows need no bounds arithmetic: rows out
//            of range are NaN rows, lane 0's column left of the row (pad 1) is OR'ed to
//            NaN, and a window's first in-range position is known per lane and row.
//   dx       the lane owns dx columns 4 j .. 4 j + 3 and adds, in registers and in output
//            order (cell_gather's rule), the dy of each window whose argmax the element is:
//            its own two windows and, for 3x3, the next lane's left window (argmax and dy
//            in one word by a shuffle). A dx row complete after window row i leaves in one
//            8-byte store (blend_quad) or two 4-byte ones; the row shared with window row
//            i + 1 is carried. A segment after the first recomputes the window row above
//            it for that row (one row of work more a segment).
// One block barrier a stage (its buffers then free for the next copies). Needs x rows in
// whole 16-byte pieces (W % 8 == 0, strides and pointer 16-byte aligned), dy planes
// contiguous in 16-byte pieces, OW = W / 2 (so every window lies within the row but for
// the pad), dx in aligned pairs. Bytes: x + dy + dx (+ dx if beta != 0).
// Ceilings at 128x256x56x56 bf16: 462 MB -> 0.110 ms at 4.2 TB/s (H200); 80% of copy under
// the bench's 2x + 2y is 0.153 ms. Instructions (SASS): ~150 a window pair and row with
// its stores, the copies ~0; 64 threads a plane for 8 rows (7 and the recomputed one) ->
// ~2.4 K warp instructions a plane, ~78 M in all, ~0.08 ms of issue at one a cycle a
// scheduler (pool_bwd_stream16: 3-5 K a plane). Measured in docs/PERFORMANCE.md.
constexpr int kWalkMaxStages = 4;
constexpr int kWalkMaxThreads = 512;
constexpr uint32_t kWalkGap = 16;  // NaN bytes before a plane's first staged row (lane 0's left word)

struct PoolBwdWalk {
    Pool2d p;
    uint32_t planes, batches;  // N * C; batches of P planes
    int P, V, lg, rps;         // planes a batch, segments a plane, lanes a group (1 << lg), window rows a segment
    int stages;                // batches in flight a block
    bool whole;                // x planes contiguous: one copy a plane
    uint32_t pbytes, doff;     // a plane's region in a stage (gap, x rows, dy); dy's offset in it
    uint32_t dbytes;           // a dy plane
    int wq;                    // lanes that own dx and windows: W / 4
    bool dx8;                  // dx rows in aligned 8-byte groups
    FastDiv div_c;
};

template <class T, int R, int S>
__global__ void __launch_bounds__(kWalkMaxThreads)
    pool_bwd_walk16(PoolBwdWalk t, const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                    float alpha, float beta) {
#if ODNN_SM90
    constexpr int PAR = S == 3 ? 1 : 0;  // 3x3 at pad 1 (windows from an odd column), 2x2 at pad 0
    constexpr int NP = ColPairs<S, PAR>::NP;
    constexpr int R0 = R == 3 ? 1 : 0;  // rows a window row loads from R0 on (3x3: row 0 carried)
    constexpr uint32_t kNan = Half2Of<T>::kNan;
    extern __shared__ __align__(128) unsigned char walk_smem[];
    __shared__ uint64_t full[kWalkMaxStages];
    const Pool2d& p = t.p;
    const uint32_t sbytes = static_cast<uint32_t>(t.P) * t.pbytes;  // a stage
    {
        // NaN over every stage (the gaps and border rows stay; rows and dy planes are
        // copied over), ordered before the copies (mbar_init_fence: the async proxy).
        const uint32_t words = static_cast<uint32_t>(t.stages) * sbytes / 4u;
        for (uint32_t l = threadIdx.x; l < words; l += blockDim.x) reinterpret_cast<uint32_t*>(walk_smem)[l] = kNan;
        if (threadIdx.x == 0)
            for (int s = 0; s < t.stages; ++s) sm90::mbar_init(&full[s], 1);
        sm90::mbar_init_fence();
        __syncthreads();
    }
    const uint32_t pitch2 = static_cast<uint32_t>(p.w) * 2u;  // a staged row, bytes
    const uint32_t xplane = static_cast<uint32_t>(p.h) * pitch2;
    const uint32_t xrow0 = kWalkGap + static_cast<uint32_t>(p.ph) * pitch2;  // x row 0 in a plane's region
    // Warp 0 copies batch b into stage s: its planes' x (one copy a plane, or a row) and dy.
    auto issue = [&](uint32_t b, int s) {
        if (b >= t.batches) return;
        const uint32_t q0 = b * static_cast<uint32_t>(t.P);
        const uint32_t np = min(static_cast<uint32_t>(t.P), t.planes - q0);
        const uint32_t per = t.whole ? 2u : static_cast<uint32_t>(p.h) + 1u;  // copies a plane, dy last
        if (threadIdx.x == 0) sm90::mbar_arrive_expect(&full[s], np * (xplane + t.dbytes));
        __syncwarp();
        unsigned char* st = walk_smem + static_cast<uint32_t>(s) * sbytes;
        for (uint32_t l = threadIdx.x; l < np * per; l += 32) {
            const uint32_t pp = l / per, r = l - pp * per, q = q0 + pp;
            const uint32_t n = t.div_c.div(q), c = q - n * t.div_c.d;
            unsigned char* dst = st + pp * t.pbytes;
            if (r + 1 < per)
                sm90::bulk_load(dst + xrow0 + r * pitch2,
                                x + (size_t{n} * p.xs[0] + size_t{c} * p.xs[1] + size_t{r} * p.xs[2]),
                                t.whole ? xplane : pitch2, &full[s]);
            else
                sm90::bulk_load(dst + t.doff, dy + (size_t{n} * p.ys[0] + size_t{c} * p.ys[1]), t.dbytes, &full[s]);
        }
    };
    if (threadIdx.x < 32)
        for (int s = 0; s < t.stages; ++s) issue(blockIdx.x + static_cast<uint32_t>(s) * gridDim.x, s);

    // This thread: group g (plane slot pp, segment v), lane j.
    const int G = 1 << t.lg, j = static_cast<int>(threadIdx.x) & (G - 1), g = static_cast<int>(threadIdx.x) >> t.lg;
    const int pp = g / t.V, v = g - pp * t.V;
    const unsigned gmask = (G == 32 ? 0xffffffffu : ((1u << G) - 1u)) << (static_cast<int>(threadIdx.x) & 31 & ~(G - 1));
    const int i0 = v * t.rps, i1 = min(p.oh, i0 + t.rps);
    const int start = R == 3 && v > 0 ? i0 - 1 : i0;  // the recomputed row above the segment
    const bool last_seg = i1 == p.oh;
    const bool owns = j < t.wq;  // dx columns 4 j .. 4 j + 3 and windows 2 j, 2 j + 1
    const uint32_t wok = opaque(owns ? ~0u : 0u);
    const uint32_t nbok = opaque(j + 1 < G ? ~0u : 0u);                   // the next lane is in the group
    const uint32_t lnan = opaque(PAR == 1 && j == 0 ? kNan : 0u);          // lane 0: the column left of the row
    const uint32_t first_c = opaque(static_cast<uint32_t>(max(0, p.pw - 4 * j)));  // left window's first column
    // The lane's first word in staged row 0 (lanes without windows read lane 0's) and dy word.
    const uint32_t xoff = opaque(kWalkGap + (owns ? static_cast<uint32_t>(4 * j) * 2u : 0u) - 2u * PAR * 2u);
    const uint32_t doff_l = opaque(t.doff + (owns ? static_cast<uint32_t>(j) * 4u : 0u));
    const uint32_t zs2 = p.zs[2] * 2u;
    auto load = [&](const unsigned char* a, uint32_t (&w)[NP]) {
        if constexpr (PAR == 1) {
            w[0] = *reinterpret_cast<const uint32_t*>(a) | lnan;
            const uint2 u = *reinterpret_cast<const uint2*>(a + 4);
            w[1] = u.x;
            w[2] = u.y;
        } else {
            const uint2 u = *reinterpret_cast<const uint2*>(a);
            w[0] = u.x;
            w[1] = u.y;
        }
    };
    auto store = [&](char* o, float (&a)[4]) {
        if (t.dx8) {
            blend_quad<T>(o, a, alpha, beta);
        } else {
            blend_pair<T>(o, a[0], a[1], alpha, beta);
            blend_pair<T>(o + 4, a[2], a[3], alpha, beta);
        }
    };

    int k = 0;
    for (uint32_t b = blockIdx.x; b < t.batches; b += gridDim.x, ++k) {
        const int s = k % t.stages;
        sm90::mbar_wait(&full[s], static_cast<uint32_t>(k / t.stages) & 1u);
        const uint32_t q = b * static_cast<uint32_t>(t.P) + static_cast<uint32_t>(pp);
        if (q < t.planes && i0 < p.oh) {  // uniform in the group
            // Window row i's rows r: staged rows 2 i + r (x rows 2 i - ph + r; staged row
            // ph is x row 0, at xrow0).
            const unsigned char* xs =
                walk_smem + static_cast<uint32_t>(s) * sbytes + static_cast<uint32_t>(pp) * t.pbytes + xoff;
            const unsigned char* ds =
                walk_smem + static_cast<uint32_t>(s) * sbytes + static_cast<uint32_t>(pp) * t.pbytes + doff_l;
            const uint32_t n = t.div_c.div(q), c = q - n * t.div_c.d;
            char* ob = reinterpret_cast<char*>(dx + (size_t{n} * p.zs[0] + size_t{c} * p.zs[1])) + j * 8;
            uint32_t w[R][NP];  // window row i's x words; rows R0.. and dy loaded a row ahead
            uint32_t nx[R][NP], ndy;
            if constexpr (R == 3) load(xs + static_cast<uint32_t>(2 * start) * pitch2, w[0]);
#pragma unroll
            for (int r = R0; r < R; ++r) load(xs + static_cast<uint32_t>(2 * start + r) * pitch2, nx[r]);
            ndy = *reinterpret_cast<const uint32_t*>(ds + static_cast<uint32_t>(start * p.ow) * 2u);
            float carry[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // the dx row shared with the next window row
            for (int i = start; i < i1; ++i) {
#pragma unroll
                for (int r = R0; r < R; ++r)
#pragma unroll
                    for (int e = 0; e < NP; ++e) w[r][e] = nx[r][e];
                const uint32_t dyw = ndy & wok;
                if (i + 1 < i1) {
#pragma unroll
                    for (int r = R0; r < R; ++r) load(xs + static_cast<uint32_t>(2 * i + 2 + r) * pitch2, nx[r]);
                    ndy = *reinterpret_cast<const uint32_t*>(ds + static_cast<uint32_t>((i + 1) * p.ow) * 2u);
                }
                uint32_t pos[R * S];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    pos[r * S + 0] = window_pos<PAR, 0>(w[r]);
                    pos[r * S + 1] = window_pos<PAR, 1>(w[r]);
                    if constexpr (S == 3) pos[r * S + 2] = window_pos<PAR, 2>(w[r]);
                }
                // First in-range positions: row ph - 2 i of window row 0, column first_c.
                const uint32_t r0 = static_cast<uint32_t>(max(0, p.ph - 2 * i));
                const uint32_t apk = pair_argmax_from<T, R, S>(pos, (r0 * S + first_c) | (r0 * S) << 16);
                if constexpr (R == 3) {
#pragma unroll
                    for (int e = 0; e < NP; ++e) w[0][e] = w[R - 1][e];
                }
                // Windows in output order: the left (2 j), the right (2 j + 1), the next lane's left.
                const int code[3] = {static_cast<int>(apk & 0xffffu), static_cast<int>(apk >> 16), 0};
                float d[3] = {lo_f<T>(dyw), hi_f<T>(dyw), 0.0f};
                int cn = 0;
                if constexpr (PAR == 1) {
                    const uint32_t nb = __shfl_down_sync(gmask, __byte_perm(apk, dyw, 0x5410), 1, G) & nbok;
                    cn = static_cast<int>(nb & 0xffffu);
                    d[2] = hi_f<T>(nb);
                }
                float acc[R][4];
#pragma unroll
                for (int r = 0; r < R; ++r)
#pragma unroll
                    for (int cc = 0; cc < 4; ++cc) {
                        float a = R == 3 && r == 0 ? carry[cc] : 0.0f;
#pragma unroll
                        for (int wi = 0; wi < 3; ++wi) {
                            const int col = cc + PAR - 2 * wi;  // the element's column in window wi
                            if (col < 0 || col >= S || (wi == 2 && PAR == 0)) continue;
                            if ((wi == 2 ? cn : code[wi]) == r * S + col) a += d[wi];
                        }
                        acc[r][cc] = a;
                    }
                // Rows complete after this window row: all but a 3x3 window's last.
                if (i >= i0) {
#pragma unroll
                    for (int r = 0; r < (R == 3 ? 2 : R); ++r) {
                        const int ih = 2 * i - p.ph + r;
                        if (owns && ih >= 0 && ih < p.h) store(ob + static_cast<uint32_t>(ih) * zs2, acc[r]);
                    }
                }
                if constexpr (R == 3) {
#pragma unroll
                    for (int cc = 0; cc < 4; ++cc) carry[cc] = acc[2][cc];
                }
            }
            if (last_seg && owns) {
                // The last window row's carried row (3x3), then rows no window covers (zero).
                int ih = 2 * (p.oh - 1) - p.ph + R - 1;
                if (R == 3 && ih < p.h) store(ob + static_cast<uint32_t>(ih) * zs2, carry);
                for (++ih; ih < p.h; ++ih) {
                    float z[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    store(ob + static_cast<uint32_t>(ih) * zs2, z);
                }
            }
        }
        __syncthreads();  // every group is done with stage s
        if (threadIdx.x < 32) issue(b + static_cast<uint32_t>(t.stages) * gridDim.x, s);
    }
#else
    __trap();  // never launched: bwd_walk16 requires sm_90 code
#endif
}

// pool_bwd_walk16 launched for the problem (*taken), or not taken: not sm_90, NaN
// propagation, another window or pad, W not a multiple of 8 or over 128, OW other than
// W / 2, x rows or dy planes not in whole 16-byte pieces, dx not in aligned pairs, or a
// plane's buffers over the shared memory. Tuning knobs (read each call; the defaults
// measured in docs/PERFORMANCE.md): ODNN_POOL_WALK16_ROWS (window rows a segment),
// ODNN_POOL_WALK16_PLANES (planes a batch; 0: as many as kWalkMaxThreads threads take),
// ODNN_POOL_WALK16_STAGES (batches in flight a block).
template <class T, int R, int S>
Status bwd_walk16(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p, bool* taken) {
    *taken = false;
    constexpr int PAR = S == 3 ? 1 : 0;
    if (p.prop || p.pw != PAR || p.ph >= R || p.w % 8 != 0 || p.w > 128 || p.ow * 2 != p.w || p.oh < 1 || !p.plane32)
        return Status::ok();
    // Every window holds an in-range row (its first in-range position is then in range).
    if (2 * (p.oh - 1) - p.ph >= p.h || static_cast<int64_t>(p.n) * p.c >= (int64_t{1} << 31)) return Status::ok();
    auto pieces16 = [](const TensorDesc& d, const void* ptr) {
        return d.strides[3] == 1 && (d.strides[0] * 2) % 16 == 0 && (d.strides[1] * 2) % 16 == 0 && aligned_to(ptr, 16);
    };
    if (!pieces16(pb.x, pb.x_data) || (pb.x.strides[2] * 2) % 16 != 0) return Status::ok();
    if (!pieces16(pb.dy, pb.dy_data) || pb.dy.strides[2] != p.ow || (int64_t{p.oh} * p.ow * 2) % 16 != 0)
        return Status::ok();
    if (!pairs_fit(pb.dx, pb.dx_data)) return Status::ok();
    static const size_t max_smem = sm90_dyn_smem(reinterpret_cast<const void*>(pool_bwd_walk16<T, R, S>), false);
    if (max_smem == 0) return Status::ok();

    PoolBwdWalk t;
    t.p = p;
    t.wq = p.w / 4;
    t.lg = t.wq <= 8 ? 3 : t.wq <= 16 ? 4 : 5;
    const int G = 1 << t.lg;
    const int rows = static_cast<int>(std::clamp(core::knob_long("ODNN_POOL_WALK16_ROWS", 7), 1L, 1024L));
    t.V = (p.oh + rows - 1) / rows;
    t.rps = (p.oh + t.V - 1) / t.V;
    t.V = (p.oh + t.rps - 1) / t.rps;
    if (t.V * G > kWalkMaxThreads) return Status::ok();
    t.whole = pb.x.strides[2] == p.w;
    const int srows = p.ph + p.h + std::max(0, 2 * (p.oh - 1) - p.ph + R - p.h);
    t.doff = (kWalkGap + static_cast<uint32_t>(srows * p.w * 2) + 15u) / 16u * 16u;
    t.dbytes = static_cast<uint32_t>(p.oh * p.ow * 2);
    t.pbytes = (t.doff + t.dbytes + 15u) / 16u * 16u;
    // Planes a batch: whole warps, at most kWalkMaxThreads threads, the buffers within the
    // shared memory (fewer stages first, then fewer planes).
    const int per = t.V * G;  // threads a plane
    const int cap = std::max(1, kWalkMaxThreads / per);
    const long want_p = core::knob_long("ODNN_POOL_WALK16_PLANES", 0);
    t.P = want_p > 0 ? static_cast<int>(std::min<long>(want_p, cap)) : cap;
    t.stages = static_cast<int>(std::clamp(core::knob_long("ODNN_POOL_WALK16_STAGES", 2), 2L, long{kWalkMaxStages}));
    auto smem_of = [&] { return static_cast<size_t>(t.stages) * t.P * t.pbytes; };
    auto whole_warps = [&](int P) { return (P * per) % 32 == 0; };
    while (t.P > 1 && !whole_warps(t.P)) --t.P;
    while (!whole_warps(t.P)) ++t.P;  // one plane of a partial warp: the fewest planes of whole warps
    if (t.P * per > kWalkMaxThreads) return Status::ok();
    while (smem_of() > max_smem && t.stages > 2) --t.stages;
    while (smem_of() > max_smem && t.P > 1) {
        int P = t.P - 1;
        while (P > 0 && !whole_warps(P)) --P;
        if (P == 0) break;
        t.P = P;
    }
    if (smem_of() > max_smem) return Status::ok();
    *taken = true;
    t.planes = static_cast<uint32_t>(p.n) * static_cast<uint32_t>(p.c);
    if (t.planes == 0) return Status::ok();
    t.batches = (t.planes + static_cast<uint32_t>(t.P) - 1) / static_cast<uint32_t>(t.P);
    t.dx8 = pb.dx.strides[0] % 4 == 0 && pb.dx.strides[1] % 4 == 0 && pb.dx.strides[2] % 4 == 0 &&
            aligned_to(pb.dx_data, 8);
    t.div_c = FastDiv(static_cast<uint32_t>(p.c));
    return launch_persistent_bwd<T>(h, pb, pool_bwd_walk16<T, R, S>, t, t.batches, t.P * t.V * G, smem_of());
}

template <class T, int R, int S, int SH, int SW>
Status bwd_cells_layout(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    // 16 bytes of FLOAT; HALF / BFLOAT16: 16 bytes packed when NaNs are skipped, else 8 (the
    // float path with 8 channels would take 80 registers).
    constexpr int kV = 4;
    const bool c_inner = pb.dx.strides[1] == 1 && p.c > 1;
    if (!c_inner) {
        if constexpr (sizeof(T) == 4) {
            // FLOAT: shared-memory bands (pool_bwd_planes), else strips. HALF / BFLOAT16 keep
            // the packed pairs (faster than bands for them: docs/PERFORMANCE.md).
            PoolBwdPlanes t;
            size_t smem = 0;
            if (plan_bwd_planes<R, S>(pb, p, &t, &smem)) return launch_bwd_planes<R, S>(h, pb, t, smem);
        } else {
            // 16-bit, NaNs skipped: planes copied in bulk, lanes walking window-pair
            // columns (pool_bwd_walk16, sm_90; ODNN_POOL_WALK16=off skips it), else whole
            // planes streamed through shared memory (pool_bwd_stream16;
            // ODNN_POOL_STREAM16=off skips it), else two window columns a lane
            // (pool_bwd_pairs); the shared-memory bands with packed window pairs
            // (pool_bwd_planes16) opt-in, before all three.
            bool taken = false;
            if (core::knob_is("ODNN_POOL_PLANES16", "on")) {
                const Status st = bwd_planes16<T, R, S>(h, pb, p, &taken);
                if (taken) return st;
            }
            if (!core::knob_is("ODNN_POOL_WALK16", "off")) {
                const Status st = bwd_walk16<T, R, S>(h, pb, p, &taken);
                if (taken) return st;
            }
            if (!core::knob_is("ODNN_POOL_STREAM16", "off")) {
                const Status st = bwd_stream16<T, R, S>(h, pb, p, &taken);
                if (taken) return st;
            }
            if (!p.prop && pairs_fit(pb.x, pb.x_data) && pairs_fit(pb.dx, pb.dx_data))
                return p.pw % 2 ? launch_bwd_pairs<T, R, S, 1>(h, pb, p) : launch_bwd_pairs<T, R, S, 0>(h, pb, p);
        }
        return launch_bwd_strips<T, R, S, SH, SW>(h, pb, p);
    }
    // Whether every tensor holds whole aligned vectors of v channels.
    auto fits = [&](int v) {
        bool ok = p.c % v == 0 && aligned_to(pb.x_data, sizeof(T) * v) && aligned_to(pb.dy_data, sizeof(T) * v) &&
                  aligned_to(pb.dx_data, sizeof(T) * v);
        for (const TensorDesc* d : {&pb.x, &pb.dy, &pb.dx}) {
            ok = ok && d->strides[1] == 1;
            for (int i = 0; i < 4; ++i)
                if (i != 1) ok = ok && d->strides[i] % v == 0;
        }
        return ok;
    };
    if constexpr (sizeof(T) == 2) {
        if (!p.prop && fits(8)) return launch_bwd_cells<T, 8, R, S, SH, SW>(h, pb, p);
    }
    if (fits(kV)) return launch_bwd_cells<T, kV, R, S, SH, SW>(h, pb, p);
    return launch_bwd_cells<T, 1, R, S, SH, SW>(h, pb, p);
}

template <class T>
Status bwd_cells(const core::Handle& h, const core::PoolingBwdProblem& pb, const Pool2d& p) {
    if (p.r == 3) return bwd_cells_layout<T, 3, 3, 2, 2>(h, pb, p);
    return bwd_cells_layout<T, 2, 2, 2, 2>(h, pb, p);
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

// The thread count of a 2-D forward kernel over `rows` output rows (or row blocks) and
// the divisors out_coords takes.
struct OutSplit {
    uint32_t total;
    FastDiv a, b, c;
};

template <int V, bool kCInner>
OutSplit out_split(const Pool2d& p, int rows) {
    OutSplit o;
    o.total = static_cast<uint32_t>(static_cast<int64_t>(p.n) * p.c * rows * p.ow / V);
    o.a = FastDiv(static_cast<uint32_t>(kCInner ? p.c / V : p.ow));
    o.b = FastDiv(static_cast<uint32_t>(kCInner ? p.ow : rows));
    o.c = FastDiv(static_cast<uint32_t>(kCInner ? rows : p.c));
    return o;
}

template <class T, int V, bool kCInner, FwdOp kOp, int R>
void launch_fwd_cols_op(const core::Handle& h, const Pool2d& p, const T* x, T* y, float alpha, float beta) {
    constexpr int kKH = V >= 4 ? 2 : 4;  // vector threads: fewer rows in registers (3x3/2: 7.5 loads an output)
    const OutSplit o = out_split<V, kCInner>(p, (p.oh + kKH - 1) / kKH);
    pool_fwd_cols<T, V, kCInner, kOp, R, R, 2, 2, kKH>
        <<<grid_for(o.total), kThreads, 0, h.stream>>>(p, o.a, o.b, o.c, o.total, x, y, alpha, beta);
}

// 3x3 and 2x2 windows at stride 2 (fixed_window).
template <class T, int V, bool kCInner>
Status launch_fwd_cols(const core::Handle& h, const Pool2d& p, const T* x, T* y, float alpha, float beta) {
    const bool is_max = p.mode == CUDNN_POOLING_MAX || p.mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    auto go = [&](auto r) {
        constexpr int R = decltype(r)::value;
        if (!is_max)
            launch_fwd_cols_op<T, V, kCInner, FwdOp::kAvg, R>(h, p, x, y, alpha, beta);
        else if (p.prop)
            launch_fwd_cols_op<T, V, kCInner, FwdOp::kMaxNan, R>(h, p, x, y, alpha, beta);
        else
            launch_fwd_cols_op<T, V, kCInner, FwdOp::kMax, R>(h, p, x, y, alpha, beta);
    };
    if (p.r == 3)
        go(std::integral_constant<int, 3>{});
    else
        go(std::integral_constant<int, 2>{});
    return launched("cuda_pooling_fwd");
}

// Forward 2-D: walk y in memory order (channels innermost: V channels per thread when
// channel_vec allows), the common windows compiled with a fixed size.
template <class T, int V, bool kCInner>
Status launch_fwd_2d(const core::Handle& h, const core::PoolingFwdProblem& pf, const Pool2d& p) {
    const T* x = static_cast<const T*>(pf.x_data);
    T* y = static_cast<T*>(pf.y_data);
    const float alpha = static_cast<float>(pf.out.alpha), beta = static_cast<float>(pf.out.beta);
    if (fixed_window(p)) return launch_fwd_cols<T, V, kCInner>(h, p, x, y, alpha, beta);
    const OutSplit o = out_split<V, kCInner>(p, p.oh);
    const unsigned grid = grid_for(o.total);
    if (p.r == 3 && p.s == 3)
        pool_fwd_2d<T, V, kCInner, 3, 3><<<grid, kThreads, 0, h.stream>>>(p, o.a, o.b, o.c, o.total, x, y, alpha, beta);
    else if (p.r == 2 && p.s == 2)
        pool_fwd_2d<T, V, kCInner, 2, 2><<<grid, kThreads, 0, h.stream>>>(p, o.a, o.b, o.c, o.total, x, y, alpha, beta);
    else
        pool_fwd_2d<T, V, kCInner, 0, 0><<<grid, kThreads, 0, h.stream>>>(p, o.a, o.b, o.c, o.total, x, y, alpha, beta);
    return launched("cuda_pooling_fwd");
}

// HALF / BFLOAT16 max, 3x3 / 2x2 at stride 2, W innermost: pool_fwd_pairs (two output
// columns a thread). y is written in pairs when its layout allows, else element by element.
template <class T>
Status launch_fwd_pairs(const core::Handle& h, const core::PoolingFwdProblem& pf, const Pool2d& p) {
    constexpr int kKH = 4;
    const T* x = static_cast<const T*>(pf.x_data);
    T* y = static_cast<T*>(pf.y_data);
    const float alpha = static_cast<float>(pf.out.alpha), beta = static_cast<float>(pf.out.beta);
    const bool y_pairs = pf.y.strides[3] == 1 && pf.y.strides[0] % 2 == 0 && pf.y.strides[1] % 2 == 0 &&
                         pf.y.strides[2] % 2 == 0 && aligned_to(pf.y_data, 4);
    const int rows = (p.oh + kKH - 1) / kKH, qw = (p.ow + 1) / 2;
    OutSplit o;
    o.total = static_cast<uint32_t>(static_cast<int64_t>(p.n) * p.c * rows * qw);
    o.a = FastDiv(static_cast<uint32_t>(qw));
    o.b = FastDiv(static_cast<uint32_t>(rows));
    o.c = FastDiv(static_cast<uint32_t>(p.c));
    auto go = [&](auto nan, auto r, auto par) {
        constexpr bool kNan = decltype(nan)::value;
        constexpr int R = decltype(r)::value, PAR = decltype(par)::value;
        pool_fwd_pairs<T, kNan, R, PAR, kKH><<<grid_for(o.total), kThreads, 0, h.stream>>>(
            p, o.a, o.b, o.c, o.total, x, y, alpha, beta, y_pairs);
    };
    auto by_par = [&](auto nan, auto r) {
        if (p.pw % 2)
            go(nan, r, std::integral_constant<int, 1>{});
        else
            go(nan, r, std::integral_constant<int, 0>{});
    };
    auto by_r = [&](auto nan) {
        if (p.r == 3)
            by_par(nan, std::integral_constant<int, 3>{});
        else
            by_par(nan, std::integral_constant<int, 2>{});
    };
    if (p.prop)
        by_r(std::true_type{});
    else
        by_r(std::false_type{});
    return launched("cuda_pooling_fwd");
}

template <class T>
Status fwd_2d(const core::Handle& h, const core::PoolingFwdProblem& pf) {
    const Pool2d p = make_pool2d(pf.g, pf.x, pf.y, nullptr);
    if (static_cast<int64_t>(p.n) * p.c * p.oh * p.ow == 0) return Status::ok();
    const bool c_inner = pf.y.strides[1] == 1 && p.c > 1;
    if constexpr (sizeof(T) == 2) {
        const bool is_max = p.mode == CUDNN_POOLING_MAX || p.mode == CUDNN_POOLING_MAX_DETERMINISTIC;
        if (!c_inner && is_max && fixed_window(p) && pairs_fit(pf.x, pf.x_data)) return launch_fwd_pairs<T>(h, pf, p);
    }
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
                if (p.g.is_max() && p.g.nsp == 2) {
                    const Pool2d p2 = make_pool2d(p.g, p.x, p.dy, &p.dx);
                    if (fixed_window(p2)) return bwd_cells<T>(h, p, p2);
                }
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
