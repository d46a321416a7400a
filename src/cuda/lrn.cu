// CUDA cross-channel LRN and divisive normalization, forward and backward, any rank and
// strides (formulas in core/pool_problem.hpp). One thread per element; window sums are
// read directly (the windows are at most 16 wide per dim). Divisive normalization's
// backward first stores s and dy * u * s^(-beta-1) per element in scratch (dense), so
// the adjoint window sum costs one read per neighbour.
#include "core/cuda_runtime.hpp"
#include "core/elem_access.hpp"
#include "core/norm_math.hpp"
#include "core/pool_problem.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

constexpr int kThreads = 256;

struct Geo {
    int nd;
    int64_t dims[core::kDimMax];
    int64_t xs[core::kDimMax], ys[core::kDimMax], dys[core::kDimMax];
};

Geo geo_of(const core::TensorDesc& x, const core::TensorDesc& y, const core::TensorDesc* dy) {
    Geo g{};
    g.nd = x.nb_dims;
    for (int i = 0; i < x.nb_dims; ++i) {
        g.dims[i] = x.dims[i];
        g.xs[i] = x.strides[i];
        g.ys[i] = y.strides[i];
        g.dys[i] = dy ? dy->strides[i] : 0;
    }
    return g;
}

// The loops over dims run over every possible dim with constant indices (ODNN_UNROLL):
// indexed with a run-time dim, the coordinate arrays went to local memory in every thread.
__device__ __forceinline__ void coords_of(const Geo& g, int64_t t, int64_t* c) {
    ODNN_UNROLL
    for (int d = core::kDimMax - 1; d >= 0; --d) {
        if (d >= g.nd) continue;
        c[d] = t % g.dims[d];
        t /= g.dims[d];
    }
}

__device__ __forceinline__ int64_t off(const int64_t* st, const int64_t* c, int nd) {
    int64_t o = 0;
    ODNN_UNROLL
    for (int d = 0; d < core::kDimMax; ++d)
        if (d < nd) o += c[d] * st[d];
    return o;
}

struct LrnParams {
    int behind, ahead;
    double a, beta, k;  // a = alpha / n (LRN) or alpha / n^dims (divisive)
};

// s at channel c of the pixel whose channel-0 element is at xo.
template <class T>
__device__ __forceinline__ typename Io<T>::C lrn_s(const T* x, int64_t xo0, int64_t cs, int64_t c, int64_t C_,
                                                   const LrnParams& p) {
    using C = typename Io<T>::C;
    C sum = C(0);
    for (int64_t j = c - p.behind; j <= c + p.ahead; ++j)
        if (j >= 0 && j < C_) {
            const C v = Io<T>::in(x[xo0 + j * cs]);
            sum += v * v;
        }
    return static_cast<C>(p.k) + static_cast<C>(p.a) * sum;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    lrn_kernel(Geo g, const T* __restrict__ x, const T* __restrict__ dy, T* out, int64_t total, LrnParams p,
               bool backward, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[core::kDimMax];
        coords_of(g, t, c);
        const int64_t ch = c[1], C_ = g.dims[1];
        c[1] = 0;
        const int64_t x0 = off(g.xs, c, g.nd), dy0 = off(g.dys, c, g.nd);
        const int64_t xcs = g.xs[1], dycs = g.dys[1];
        c[1] = ch;
        const C xv = Io<T>::in(x[x0 + ch * xcs]);
        const C b = static_cast<C>(p.beta);
        C r;
        if (!backward) {
            r = xv * core::math_pow(lrn_s(x, x0, xcs, ch, C_, p), -b);
        } else {
            C sum = C(0);
            for (int64_t j = ch - p.ahead; j <= ch + p.behind; ++j)
                if (j >= 0 && j < C_) {
                    const C sj = lrn_s(x, x0, xcs, j, C_, p);
                    sum += Io<T>::in(dy[dy0 + j * dycs]) * Io<T>::in(x[x0 + j * xcs]) * core::math_pow(sj, -b - C(1));
                }
            r = Io<T>::in(dy[dy0 + ch * dycs]) * core::math_pow(lrn_s(x, x0, xcs, ch, C_, p), -b) -
                C(2) * b * static_cast<C>(p.a) * xv * sum;
        }
        const int64_t o = off(g.ys, c, g.nd);
        C v = alpha * r;
        if (beta != C(0)) v += beta * Io<T>::in(out[o]);
        out[o] = Io<T>::out(v);
    }
}

// ---- Divisive normalization ----

// u at a position given by coordinates (x - means, means optional).
template <class T>
__device__ __forceinline__ typename Io<T>::C div_u(const T* x, const T* means, const Geo& g, const int64_t* c) {
    const int64_t o = off(g.xs, c, g.nd);
    typename Io<T>::C u = Io<T>::in(x[o]);
    if (means) u -= Io<T>::in(means[o]);
    return u;
}

// Calls f(coords) for every in-bounds position of the spatial box [c - lo, c + hi].
template <class F>
__device__ __forceinline__ void for_box(const Geo& g, const int64_t* c, int lo, int hi, F&& f) {
    int64_t cur[core::kDimMax] = {};
    ODNN_UNROLL
    for (int d = 0; d < core::kDimMax; ++d)
        if (d < g.nd) cur[d] = d < 2 ? c[d] : c[d] - lo;
    for (;;) {
        bool inside = true;
        ODNN_UNROLL
        for (int d = 2; d < core::kDimMax; ++d)
            if (d < g.nd) inside = inside && cur[d] >= 0 && cur[d] < g.dims[d];
        if (inside) f(cur);
        // The next position, the last dim fastest; done when every spatial dim wrapped.
        bool wrapped = true;
        ODNN_UNROLL
        for (int d = core::kDimMax - 1; d >= 2; --d) {
            if (d >= g.nd || !wrapped) continue;
            wrapped = ++cur[d] > c[d] + hi;
            if (wrapped) cur[d] = c[d] - lo;
        }
        if (wrapped) return;
    }
}

template <class T>
__device__ __forceinline__ typename Io<T>::C div_s(const T* x, const T* means, const Geo& g, const int64_t* c,
                                                   const LrnParams& p) {
    using C = typename Io<T>::C;
    C sum = C(0);
    for_box(g, c, p.behind, p.ahead, [&](const int64_t* q) {
        const C u = div_u(x, means, g, q);
        sum += u * u;
    });
    return static_cast<C>(p.k) + static_cast<C>(p.a) * sum;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    divnorm_forward(Geo g, const T* __restrict__ x, const T* __restrict__ means, T* y, int64_t total, LrnParams p,
                    typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[core::kDimMax];
        coords_of(g, t, c);
        const C r = div_u(x, means, g, c) * core::math_pow(div_s(x, means, g, c, p), -static_cast<C>(p.beta));
        const int64_t o = off(g.ys, c, g.nd);
        C v = alpha * r;
        if (beta != C(0)) v += beta * Io<T>::in(y[o]);
        y[o] = Io<T>::out(v);
    }
}

// Backward pass 1: s^-beta and dy * u * s^(-beta-1), dense in logical order.
template <class T>
__global__ void __launch_bounds__(kThreads)
    divnorm_prepare(Geo g, const T* __restrict__ x, const T* __restrict__ means, const T* __restrict__ dy,
                    typename Io<T>::C* s_pow, typename Io<T>::C* tv, int64_t total, LrnParams p) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[core::kDimMax];
        coords_of(g, t, c);
        const C s = div_s(x, means, g, c, p);
        const C b = static_cast<C>(p.beta);
        s_pow[t] = core::math_pow(s, -b);
        tv[t] = Io<T>::in(dy[off(g.xs, c, g.nd)]) * div_u(x, means, g, c) * core::math_pow(s, -b - C(1));
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    divnorm_backward(Geo g, const T* __restrict__ x, const T* __restrict__ means, const T* __restrict__ dy,
                     const typename Io<T>::C* __restrict__ s_pow, const typename Io<T>::C* __restrict__ tv, T* dx,
                     T* dmeans, int64_t total, LrnParams p, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        int64_t c[core::kDimMax];
        coords_of(g, t, c);
        C sum = C(0);
        for_box(g, c, p.ahead, p.behind, [&](const int64_t* q) {
            int64_t lin = 0;
            ODNN_UNROLL
            for (int d = 0; d < core::kDimMax; ++d)
                if (d < g.nd) lin = lin * g.dims[d] + q[d];
            sum += tv[lin];
        });
        const C r = Io<T>::in(dy[off(g.xs, c, g.nd)]) * s_pow[t] -
                    C(2) * static_cast<C>(p.beta) * static_cast<C>(p.a) * div_u(x, means, g, c) * sum;
        const int64_t o = off(g.ys, c, g.nd);
        C v = alpha * r;
        if (beta != C(0)) v += beta * Io<T>::in(dx[o]);
        dx[o] = Io<T>::out(v);
        if (dmeans) {
            C m = -alpha * r;
            if (beta != C(0)) m += beta * Io<T>::in(dmeans[o]);
            dmeans[o] = Io<T>::out(m);
        }
    }
}

class CudaLrn final : public core::Impl<core::LrnProblem> {
public:
    const char* name() const override { return "cuda_lrn_cross_channel"; }
    Status execute(const core::Handle& h, const core::LrnProblem& p) const override {
        const core::LrnWindow w(p.lrn.n);
        const LrnParams lp{w.behind, w.ahead, p.lrn.alpha / p.lrn.n, p.lrn.beta, p.lrn.k};
        const core::TensorDesc& out = p.backward ? p.dx : p.y;
        const Geo g = geo_of(p.x, out, p.backward ? &p.dy : nullptr);
        const int64_t total = p.x.num_elements();
        return with_float_type(p.x.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            lrn_kernel<T><<<grid_for(total), kThreads, 0, h.stream>>>(
                g, static_cast<const T*>(p.x_data), static_cast<const T*>(p.dy_data), static_cast<T*>(p.out_data), total,
                lp, p.backward, static_cast<C>(p.out.alpha), static_cast<C>(p.out.beta));
            return launched(name());
        });
    }
};

class CudaDivNorm final : public core::Impl<core::DivNormProblem> {
public:
    const char* name() const override { return "cuda_divisive_normalization"; }
    Status execute(const core::Handle& h, const core::DivNormProblem& p) const override {
        const core::LrnWindow w(p.lrn.n);
        double a = p.lrn.alpha;
        for (int d = 2; d < p.x.nb_dims; ++d) a /= p.lrn.n;
        const LrnParams lp{w.behind, w.ahead, a, p.lrn.beta, p.lrn.k};
        const Geo g = geo_of(p.x, p.out, nullptr);
        const int64_t total = p.x.num_elements();
        return with_float_type(p.x.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const T* x = static_cast<const T*>(p.x_data);
            const T* means = static_cast<const T*>(p.means);
            const C alpha = static_cast<C>(p.out_scale.alpha), beta = static_cast<C>(p.out_scale.beta);
            if (!p.backward) {
                divnorm_forward<T><<<grid_for(total), kThreads, 0, h.stream>>>(g, x, means, static_cast<T*>(p.out_data),
                                                                              total, lp, alpha, beta);
                return launched(name());
            }
            DeviceScratch scratch;
            ODNN_RETURN_IF_ERROR(scratch.allocate(2 * static_cast<size_t>(total) * sizeof(C), h.stream));
            C* s_pow = static_cast<C*>(scratch.get());
            C* tv = s_pow + total;
            const T* dy = static_cast<const T*>(p.dy_data);
            divnorm_prepare<T><<<grid_for(total), kThreads, 0, h.stream>>>(g, x, means, dy, s_pow, tv, total, lp);
            divnorm_backward<T><<<grid_for(total), kThreads, 0, h.stream>>>(
                g, x, means, dy, s_pow, tv, static_cast<T*>(p.out_data), static_cast<T*>(p.dmeans), total, lp, alpha,
                beta);
            return launched(name());
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::LrnProblem, CudaLrn, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::DivNormProblem, CudaDivNorm, core::kPriorityGeneric);

}  // namespace odnn::cuda
