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

class CudaPoolingFwd final : public core::Impl<core::PoolingFwdProblem> {
public:
    const char* name() const override { return "cuda_pooling_fwd"; }
    Status execute(const core::Handle& h, const core::PoolingFwdProblem& p) const override {
        return with_pool_type(p.y.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
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
