// CUDA pooling forward and backward: every mode, 1-D to 6-D, any strides,
// FLOAT / DOUBLE / HALF / BFLOAT16 (and INT8 forward). Rules in core/pool_problem.hpp.
//
// Threads walk a tensor in its memory order (dims sorted by stride), so NCHW and NHWC
// both read and write coalesced; index math uses multiply-shift division.
//   forward      one thread per output: reads its window (neighbouring windows share
//                inputs through L1/L2), writes y.        Bytes: x + y (+ y if beta != 0).
//   backward avg one thread per dx element: gathers dy / count over the windows that
//                cover it (deterministic, no atomics).   Bytes: dy + dx (+ dx if beta).
//   backward max pass 1, one thread per output: the window's argmax (position in the
//                window: 1 byte for windows up to 254 elements) into scratch; pass 2,
//                one thread per dx element: adds dy of the covering windows whose argmax
//                it is.                                   Bytes: x + dy + dx + 2 * |y| / sizeof(T)
//                                                         (+ dx if beta).
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
constexpr int kMaxNd = core::kMaxPoolingDims + 2;

// A tensor's dims walked in memory order: order[0] outermost. Coordinates come back
// in logical dim order (0 = N, 1 = C, 2.. spatial).
struct Walk {
    int nd = 0;
    int order[kMaxNd] = {};
    uint32_t size[kMaxNd] = {};
    FastDiv div[kMaxNd];
    int64_t dense[kMaxNd] = {};  // strides of a dense buffer in this order (the argmax scratch)

    __device__ __forceinline__ void coords(uint32_t t, int64_t* c) const {
        for (int k = nd - 1; k >= 0; --k) {
            const uint32_t q = div[k].div(t);
            c[order[k]] = t - q * size[k];
            t = q;
        }
    }
};

Walk make_walk(const TensorDesc& t) {
    Walk w;
    w.nd = t.nb_dims;
    int idx[kMaxNd];
    for (int i = 0; i < t.nb_dims; ++i) idx[i] = i;
    std::stable_sort(idx, idx + t.nb_dims, [&](int a, int b) { return t.strides[a] > t.strides[b]; });
    for (int k = 0; k < t.nb_dims; ++k) {
        w.order[k] = idx[k];
        w.size[k] = static_cast<uint32_t>(t.dims[idx[k]]);
        w.div[k] = FastDiv(w.size[k]);
    }
    int64_t s = 1;
    for (int k = t.nb_dims - 1; k >= 0; --k) {
        w.dense[idx[k]] = s;
        s *= t.dims[idx[k]];
    }
    return w;
}

struct St {
    int64_t s[kMaxNd];
};

St strides_of(const TensorDesc& t) {
    St s{};
    for (int i = 0; i < t.nb_dims; ++i) s.s[i] = t.strides[i];
    return s;
}

__device__ __forceinline__ int64_t offset(const St& st, const int64_t* c, int nd) {
    int64_t off = 0;
    for (int i = 0; i < nd; ++i) off += c[i] * st.s[i];
    return off;
}

// The window's clipped bounds; false when it holds no input.
__device__ __forceinline__ bool window_bounds(const PoolGeom& g, const int64_t* c, int64_t* lo, int64_t* hi) {
    bool any = true;
    for (int d = 0; d < g.nsp; ++d) {
        g.window(d, c[d + 2], &lo[d], &hi[d]);
        any = any && hi[d] > lo[d];
    }
    return any;
}

// Max of the window by the rules; *arg = position in the window (row-major over the
// full window), -1 when empty.
template <class T>
__device__ typename Io<T>::C window_max(const PoolGeom& g, const T* x, const St& xs, const int64_t* c, int64_t* arg) {
    using C = typename Io<T>::C;
    int64_t lo[core::kMaxPoolingDims], hi[core::kMaxPoolingDims], i[core::kMaxPoolingDims];
    *arg = -1;
    if (!window_bounds(g, c, lo, hi)) return C(0);
    const int64_t base = c[0] * xs.s[0] + c[1] * xs.s[1];
    C best = C(0);
    bool found = false;
    int64_t first = -1, best_at = -1;
    for (int d = 0; d < g.nsp; ++d) i[d] = lo[d];
    for (;;) {
        int64_t off = base, local = 0;
        for (int d = 0; d < g.nsp; ++d) {
            off += i[d] * xs.s[d + 2];
            local = local * g.win[d] + (i[d] - (c[d + 2] * g.stride[d] - g.pad[d]));
        }
        const C v = Io<T>::in(x[off]);
        if (first < 0) first = local;
        if (v != v) {
            if (g.propagate_nan) {
                *arg = local;
                return v;
            }
        } else if (!found || v > best) {
            best = v;
            best_at = local;
            found = true;
        }
        int d = g.nsp - 1;
        while (d >= 0 && ++i[d] == hi[d]) {
            i[d] = lo[d];
            --d;
        }
        if (d < 0) break;
    }
    if (!found) {  // only NaNs
        *arg = first;
        return C(NAN);
    }
    *arg = best_at;
    return best;
}

// Sum and count of the window's inputs.
template <class T>
__device__ typename Io<T>::C window_sum(const PoolGeom& g, const T* x, const St& xs, const int64_t* c,
                                        int64_t* count) {
    using C = typename Io<T>::C;
    int64_t lo[core::kMaxPoolingDims], hi[core::kMaxPoolingDims], i[core::kMaxPoolingDims];
    *count = 0;
    if (!window_bounds(g, c, lo, hi)) return C(0);
    const int64_t base = c[0] * xs.s[0] + c[1] * xs.s[1];
    C sum = C(0);
    for (int d = 0; d < g.nsp; ++d) i[d] = lo[d];
    for (;;) {
        int64_t off = base;
        for (int d = 0; d < g.nsp; ++d) off += i[d] * xs.s[d + 2];
        sum += Io<T>::in(x[off]);
        ++*count;
        int d = g.nsp - 1;
        while (d >= 0 && ++i[d] == hi[d]) {
            i[d] = lo[d];
            --d;
        }
        if (d < 0) break;
    }
    return sum;
}

__device__ __forceinline__ double avg_divisor(const PoolGeom& g, const int64_t* c, int64_t count) {
    if (g.mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING) return static_cast<double>(count);
    double v = 1.0;
    for (int d = 0; d < g.nsp; ++d) v *= static_cast<double>(g.padded_extent(d, c[d + 2]));
    return v;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    pool_forward(PoolGeom g, Walk w, const T* __restrict__ x, St xs, T* y, St ys, int64_t total,
                 typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[kMaxNd];
        w.coords(static_cast<uint32_t>(t), c);
        C r;
        if (g.is_max()) {
            int64_t arg;
            r = window_max<T>(g, x, xs, c, &arg);
        } else {
            int64_t count;
            const C sum = window_sum<T>(g, x, xs, c, &count);
            const double div = avg_divisor(g, c, count);
            r = div > 0 ? sum / static_cast<C>(div) : C(0);
        }
        const int64_t yo = offset(ys, c, w.nd);
        C out = alpha * r;
        if (beta != C(0)) out += beta * Io<T>::in(y[yo]);
        y[yo] = Io<T>::out(out);
    }
}

// Backward max, pass 1: the argmax of every window into a dense buffer (walk order of dy).
template <class T, class IdxT>
__global__ void __launch_bounds__(kThreads)
    pool_argmax(PoolGeom g, Walk w, const T* __restrict__ x, St xs, IdxT* idx, int64_t total, IdxT none) {
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[kMaxNd];
        w.coords(static_cast<uint32_t>(t), c);
        int64_t arg;
        window_max<T>(g, x, xs, c, &arg);
        idx[t] = arg < 0 ? none : static_cast<IdxT>(arg);
    }
}

// Backward, one thread per dx element: gathers from every window covering it.
template <class T, class IdxT, bool kMax>
__global__ void __launch_bounds__(kThreads)
    pool_backward(PoolGeom g, Walk wx, Walk wy, const T* __restrict__ dy, St dys, const IdxT* __restrict__ idx,
                  T* dx, St dxs, int64_t total, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[kMaxNd], o[kMaxNd], olo[core::kMaxPoolingDims], ohi[core::kMaxPoolingDims];
        wx.coords(static_cast<uint32_t>(t), c);
        C acc = C(0);
        bool any = true;
        for (int d = 0; d < g.nsp; ++d) {
            core::pool_outputs_covering(g, d, c[d + 2], &olo[d], &ohi[d]);
            any = any && ohi[d] >= olo[d];
            o[d + 2] = olo[d];
        }
        o[0] = c[0];
        o[1] = c[1];
        while (any) {
            if constexpr (kMax) {
                int64_t local = 0, pos = c[0] * wy.dense[0] + c[1] * wy.dense[1];
                for (int d = 0; d < g.nsp; ++d) {
                    local = local * g.win[d] + (c[d + 2] - (o[d + 2] * g.stride[d] - g.pad[d]));
                    pos += o[d + 2] * wy.dense[d + 2];
                }
                if (static_cast<int64_t>(idx[pos]) == local) acc += Io<T>::in(dy[offset(dys, o, wy.nd)]);
            } else {
                int64_t lo[core::kMaxPoolingDims], hi[core::kMaxPoolingDims];
                window_bounds(g, o, lo, hi);
                int64_t count = 1;
                for (int d = 0; d < g.nsp; ++d) count *= hi[d] - lo[d];
                const double div = avg_divisor(g, o, count);
                if (div > 0) acc += Io<T>::in(dy[offset(dys, o, wy.nd)]) / static_cast<C>(div);
            }
            int d = g.nsp - 1;
            while (d >= 0 && ++o[d + 2] > ohi[d]) {
                o[d + 2] = olo[d];
                --d;
            }
            if (d < 0) break;
        }
        const int64_t xo = offset(dxs, c, wx.nd);
        C out = alpha * acc;
        if (beta != C(0)) out += beta * Io<T>::in(dx[xo]);
        dx[xo] = Io<T>::out(out);
    }
}

int64_t count_of(const TensorDesc& t) {
    int64_t n = 1;
    for (int i = 0; i < t.nb_dims; ++i) n *= t.dims[i];
    return n;
}

template <class F>
Status with_pool_type(cudnnDataType_t dt, F&& f) {
    if (dt == CUDNN_DATA_INT8) return f(Tag<int8_t>{});
    return with_float_type(dt, std::forward<F>(f));
}

class CudaPoolingFwd final : public core::Impl<core::PoolingFwdProblem> {
public:
    const char* name() const override { return "cuda_pooling_fwd"; }
    Status execute(const core::Handle& h, const core::PoolingFwdProblem& p) const override {
        return with_pool_type(p.y.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const int64_t total = count_of(p.y);
            pool_forward<T><<<grid_for(total), kThreads, 0, h.stream>>>(
                p.g, make_walk(p.y), static_cast<const T*>(p.x_data), strides_of(p.x), static_cast<T*>(p.y_data),
                strides_of(p.y), total, static_cast<C>(p.out.alpha), static_cast<C>(p.out.beta));
            return launched(name());
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
            return small ? run<T, uint8_t>(h, p) : run<T, int32_t>(h, p);
        });
    }

private:
    template <class T, class IdxT>
    Status run(const core::Handle& h, const core::PoolingBwdProblem& p) const {
        using C = typename Io<T>::C;
        const Walk wx = make_walk(p.dx), wy = make_walk(p.dy);
        const int64_t ny = count_of(p.dy), nx = count_of(p.dx);
        const C alpha = static_cast<C>(p.out.alpha), beta = static_cast<C>(p.out.beta);
        const T* dy = static_cast<const T*>(p.dy_data);
        T* dx = static_cast<T*>(p.dx_data);
        if (!p.g.is_max()) {
            pool_backward<T, IdxT, false><<<grid_for(nx), kThreads, 0, h.stream>>>(
                p.g, wx, wy, dy, strides_of(p.dy), nullptr, dx, strides_of(p.dx), nx, alpha, beta);
            return launched(name());
        }
        DeviceScratch scratch;
        ODNN_RETURN_IF_ERROR(scratch.allocate(static_cast<size_t>(ny) * sizeof(IdxT), h.stream));
        IdxT* idx = static_cast<IdxT*>(scratch.get());
        const IdxT none = static_cast<IdxT>(-1);
        pool_argmax<T, IdxT><<<grid_for(ny), kThreads, 0, h.stream>>>(p.g, wy, static_cast<const T*>(p.x_data),
                                                                      strides_of(p.x), idx, ny, none);
        pool_backward<T, IdxT, true><<<grid_for(nx), kThreads, 0, h.stream>>>(p.g, wx, wy, dy, strides_of(p.dy), idx,
                                                                              dx, strides_of(p.dx), nx, alpha, beta);
        return launched(name());
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::PoolingFwdProblem, CudaPoolingFwd, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::PoolingBwdProblem, CudaPoolingBwd, core::kPriorityGeneric);

}  // namespace odnn::cuda
