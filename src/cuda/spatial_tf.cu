// CUDA spatial transformer (formulas in core/spatial_tf_problem.hpp).
//   grid forward     one thread per (n, h, w).
//   grid backward    one block per n: the six sums of dtheta reduced in double.
//   sampler forward  one thread per output element (row-major n, c, h, w).
//   sampler backward one thread per (n, h, w): loops over c, accumulates dgrid in a
//                    register and scatters dx with double atomics into scratch; a second
//                    kernel blends the scratch into dx (so beta applies once).
// Compute in double for the coordinates (grids are small), the compute type of x for
// the samples.
#include "core/cuda_runtime.hpp"
#include "core/elem_access.hpp"
#include "core/spatial_tf_problem.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

constexpr int kThreads = 256;

__global__ void grid_forward(const void* theta, void* grid, int dt, int64_t n, int64_t h, int64_t w) {
    ODNN_GRID_STRIDE_LOOP(t, n * h * w) {
        const int64_t ww = t % w, hh = (t / w) % h, nn = t / (w * h);
        const double xw = core::tf_base_coord(ww, w), yh = core::tf_base_coord(hh, h);
        double th[6];
        for (int k = 0; k < 6; ++k) th[k] = core::load_elem(theta, nn * 6 + k, dt);
        core::store_elem(grid, 2 * t, dt, th[0] * xw + th[1] * yh + th[2]);
        core::store_elem(grid, 2 * t + 1, dt, th[3] * xw + th[4] * yh + th[5]);
    }
}

__global__ void __launch_bounds__(kThreads) grid_backward(const void* dgrid, void* dtheta, int dt, int64_t h, int64_t w) {
    const int64_t nn = blockIdx.x;
    double d[6] = {0, 0, 0, 0, 0, 0};
    for (int64_t t = threadIdx.x; t < h * w; t += kThreads) {
        const int64_t ww = t % w, hh = t / w;
        const double base[3] = {core::tf_base_coord(ww, w), core::tf_base_coord(hh, h), 1.0};
        const int64_t g = (nn * h * w + t) * 2;
        for (int r = 0; r < 2; ++r) {
            const double dg = core::load_elem(dgrid, g + r, dt);
            for (int k = 0; k < 3; ++k) d[r * 3 + k] += dg * base[k];
        }
    }
    __shared__ double sh[6][kThreads];
    for (int k = 0; k < 6; ++k) sh[k][threadIdx.x] = d[k];
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            for (int k = 0; k < 6; ++k) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 6) core::store_elem(dtheta, nn * 6 + threadIdx.x, dt, sh[threadIdx.x][0]);
}

struct Dims4 {
    int64_t n, c, hi, wi, ho, wo;
    int64_t xs[4], ys[4], dxs[4];
};

template <class T>
__device__ __forceinline__ typename Io<T>::C sample_at(const T* x, const Dims4& d, int64_t n, int64_t c, int64_t h,
                                                       int64_t w) {
    using C = typename Io<T>::C;
    if (h < 0 || h >= d.hi || w < 0 || w >= d.wi) return C(0);
    return Io<T>::in(x[n * d.xs[0] + c * d.xs[1] + h * d.xs[2] + w * d.xs[3]]);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    sampler_forward(const T* __restrict__ x, const void* grid, int gdt, T* y, Dims4 d, typename Io<T>::C alpha,
                    typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    const int64_t total = d.n * d.c * d.ho * d.wo;
    ODNN_GRID_STRIDE_LOOP(t, total) {
        const int64_t w = t % d.wo, h = (t / d.wo) % d.ho, c = (t / (d.wo * d.ho)) % d.c, n = t / (d.wo * d.ho * d.c);
        const int64_t g = ((n * d.ho + h) * d.wo + w) * 2;
        core::Bilinear b{};
        C v = C(0);
        if (core::tf_bilinear(core::load_elem(grid, g, gdt), core::load_elem(grid, g + 1, gdt), d.hi, d.wi, &b)) {
            const C wx1 = static_cast<C>(b.wx1), wy1 = static_cast<C>(b.wy1);
            v = (C(1) - wx1) * (C(1) - wy1) * sample_at(x, d, n, c, b.y0, b.x0) +
                wx1 * (C(1) - wy1) * sample_at(x, d, n, c, b.y0, b.x0 + 1) +
                (C(1) - wx1) * wy1 * sample_at(x, d, n, c, b.y0 + 1, b.x0) +
                wx1 * wy1 * sample_at(x, d, n, c, b.y0 + 1, b.x0 + 1);
        }
        const int64_t yo = n * d.ys[0] + c * d.ys[1] + h * d.ys[2] + w * d.ys[3];
        C out = alpha * v;
        if (beta != C(0)) out += beta * Io<T>::in(y[yo]);
        y[yo] = Io<T>::out(out);
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    sampler_backward(const T* __restrict__ x, const void* grid, int gdt, const T* __restrict__ dy, double* acc,
                     void* dgrid, Dims4 d, double galpha, double gbeta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, d.n * d.ho * d.wo) {
        const int64_t w = t % d.wo, h = (t / d.wo) % d.ho, n = t / (d.wo * d.ho);
        const int64_t g = t * 2;
        core::Bilinear b{};
        const bool any =
            core::tf_bilinear(core::load_elem(grid, g, gdt), core::load_elem(grid, g + 1, gdt), d.hi, d.wi, &b);
        double dgx = 0.0, dgy = 0.0;
        if (any) {
            const double w00 = (1 - b.wx1) * (1 - b.wy1), w01 = b.wx1 * (1 - b.wy1);
            const double w10 = (1 - b.wx1) * b.wy1, w11 = b.wx1 * b.wy1;
            for (int64_t c = 0; c < d.c; ++c) {
                const double dyv = Io<T>::in(dy[n * d.ys[0] + c * d.ys[1] + h * d.ys[2] + w * d.ys[3]]);
                const double x00 = sample_at(x, d, n, c, b.y0, b.x0), x01 = sample_at(x, d, n, c, b.y0, b.x0 + 1);
                const double x10 = sample_at(x, d, n, c, b.y0 + 1, b.x0), x11 = sample_at(x, d, n, c, b.y0 + 1, b.x0 + 1);
                double* img = acc + (n * d.c + c) * d.hi * d.wi;
                auto scatter = [&](int64_t yy, int64_t xx, double wt) {
                    if (yy >= 0 && yy < d.hi && xx >= 0 && xx < d.wi && wt != 0.0) atomicAdd(img + yy * d.wi + xx, wt * dyv);
                };
                scatter(b.y0, b.x0, w00);
                scatter(b.y0, b.x0 + 1, w01);
                scatter(b.y0 + 1, b.x0, w10);
                scatter(b.y0 + 1, b.x0 + 1, w11);
                dgx += dyv * ((1 - b.wy1) * (x01 - x00) + b.wy1 * (x11 - x10));
                dgy += dyv * ((1 - b.wx1) * (x10 - x00) + b.wx1 * (x11 - x01));
            }
        }
        core::blend_store(dgrid, g, gdt, dgx * static_cast<double>(d.wi - 1) * 0.5, galpha, gbeta);
        core::blend_store(dgrid, g + 1, gdt, dgy * static_cast<double>(d.hi - 1) * 0.5, galpha, gbeta);
        (void)sizeof(C);
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    blend_dx(const double* __restrict__ acc, T* dx, Dims4 d, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(t, d.n * d.c * d.hi * d.wi) {
        const int64_t w = t % d.wi, h = (t / d.wi) % d.hi, c = (t / (d.wi * d.hi)) % d.c, n = t / (d.wi * d.hi * d.c);
        const int64_t o = n * d.dxs[0] + c * d.dxs[1] + h * d.dxs[2] + w * d.dxs[3];
        C out = alpha * static_cast<C>(acc[t]);
        if (beta != C(0)) out += beta * Io<T>::in(dx[o]);
        dx[o] = Io<T>::out(out);
    }
}

class CudaSpatialTfGrid final : public core::Impl<core::SpatialTfGridProblem> {
public:
    const char* name() const override { return "cuda_spatial_tf_grid"; }
    Status execute(const core::Handle& h, const core::SpatialTfGridProblem& p) const override {
        const int dt = static_cast<int>(p.dtype);
        if (!p.backward)
            grid_forward<<<grid_for(p.n * p.h * p.w), kThreads, 0, h.stream>>>(p.in, p.out, dt, p.n, p.h, p.w);
        else
            grid_backward<<<static_cast<unsigned>(p.n), kThreads, 0, h.stream>>>(p.in, p.out, dt, p.h, p.w);
        return launched(name());
    }
};

class CudaSpatialTfSampler final : public core::Impl<core::SpatialTfSamplerProblem> {
public:
    const char* name() const override { return "cuda_spatial_tf_sampler"; }
    Status execute(const core::Handle& h, const core::SpatialTfSamplerProblem& p) const override {
        Dims4 d{};
        d.n = p.x.dims[0];
        d.c = p.x.dims[1];
        d.hi = p.x.dims[2];
        d.wi = p.x.dims[3];
        d.ho = p.y.dims[2];
        d.wo = p.y.dims[3];
        for (int i = 0; i < 4; ++i) {
            d.xs[i] = p.x.strides[i];
            d.ys[i] = p.y.strides[i];
            d.dxs[i] = p.backward ? p.dx.strides[i] : 0;
        }
        const int gdt = static_cast<int>(p.grid_dtype);
        return with_float_type(p.x.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const T* x = static_cast<const T*>(p.x_data);
            if (!p.backward) {
                sampler_forward<T><<<grid_for(d.n * d.c * d.ho * d.wo), kThreads, 0, h.stream>>>(
                    x, p.grid, gdt, static_cast<T*>(p.y_data), d, static_cast<C>(p.out.alpha),
                    static_cast<C>(p.out.beta));
                return launched(name());
            }
            DeviceScratch acc;
            const size_t bytes = static_cast<size_t>(d.n * d.c * d.hi * d.wi) * sizeof(double);
            ODNN_RETURN_IF_ERROR(acc.allocate(bytes, h.stream));
            ODNN_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(acc.get(), 0, bytes, h.stream), "cudaMemsetAsync"));
            sampler_backward<T><<<grid_for(d.n * d.ho * d.wo), kThreads, 0, h.stream>>>(
                x, p.grid, gdt, static_cast<const T*>(p.dy_data), static_cast<double*>(acc.get()), p.dgrid, d,
                p.grid_out.alpha, p.grid_out.beta);
            blend_dx<T><<<grid_for(d.n * d.c * d.hi * d.wi), kThreads, 0, h.stream>>>(
                static_cast<const double*>(acc.get()), static_cast<T*>(p.dx_data), d, static_cast<C>(p.out.alpha),
                static_cast<C>(p.out.beta));
            return launched(name());
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::SpatialTfGridProblem, CudaSpatialTfGrid, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::SpatialTfSamplerProblem, CudaSpatialTfSampler, core::kPriorityGeneric);

}  // namespace odnn::cuda
