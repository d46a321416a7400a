// Generic CUDA convolutions: every problem the legacy API can describe (1-, 2-, 3-D,
// groups, stride, padding, dilation, both modes, any strides, NCHW_VECT_C, both filter
// formats, every data-type configuration, the fused bias + activation epilogue), with
// no workspace. One thread computes one output element of forward and backward data
// (the loops of the reference, accumulating in fp32 - int32 for 8-bit data, fp64 for
// DOUBLE); one block reduces one filter-gradient element. These kernels are the
// correctness floor of the CUDA backend: the tensor-core kernels (conv_sm90*.cu) take
// the shapes they serve and leave everything else here.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/conv_problem.hpp"
#include "core/elem_access.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

namespace odnn::cuda {
namespace {

using core::ConvKind;
using core::ConvProblem;
using core::ConvTensor;
using core::Status;

// A convolution tensor by value: strides and the NCHW_VECT_C vector width.
struct Ten {
    int64_t s[5];
    int vect;
    __device__ __forceinline__ int64_t at(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
        if (vect == 1) return n * s[0] + c * s[1] + d * s[2] + h * s[3] + w * s[4];
        return (n * s[0] + (c / vect) * s[1] + d * s[2] + h * s[3] + w * s[4]) * vect + c % vect;
    }
};

Ten ten(const ConvTensor& t) {
    Ten r;
    for (int i = 0; i < 5; ++i) r.s[i] = t.strides[i];
    r.vect = t.vect;
    return r;
}

// Geometry by value.
struct Geo {
    int64_t n, c, k, cg, kg;
    int64_t in[3], out[3], filt[3], pad[3], stride[3], dil[3];
    bool flip;
    __device__ __forceinline__ int64_t tap(int d, int64_t i) const { return flip ? filt[d] - 1 - i : i; }
};

Geo geo(const ConvProblem& p) {
    Geo g;
    g.n = p.n;
    g.c = p.c;
    g.k = p.k;
    g.cg = p.cg();
    g.kg = p.kg();
    for (int i = 0; i < 3; ++i) {
        g.in[i] = p.in[i];
        g.out[i] = p.out[i];
        g.filt[i] = p.filt[i];
        g.pad[i] = p.pad[i];
        g.stride[i] = p.stride[i];
        g.dil[i] = p.dil[i];
    }
    g.flip = p.flip;
    return g;
}

// The fused epilogue of cudnnConvolutionBiasActivationForward, type-erased (z and bias
// are read once per output element).
struct Epi {
    bool enabled;
    const void* z;
    Ten zt;
    int z_dtype;
    double alpha2;
    const void* bias;
    int64_t bias_stride;
    int bias_dtype;
    bool relu, propagate_nan;
};

Epi epi(const ConvProblem& p) {
    Epi e{};
    e.enabled = p.epi.enabled;
    if (!e.enabled) return e;
    e.z = p.epi.z;
    e.zt = ten(p.epi.z_t);
    e.z_dtype = p.epi.z_t.dtype;
    e.alpha2 = p.epi.alpha2;
    e.bias = p.epi.bias;
    e.bias_stride = p.epi.bias_t.strides[1];
    e.bias_dtype = p.epi.bias_t.dtype;
    e.relu = p.epi.relu;
    e.propagate_nan = p.epi.propagate_nan;
    return e;
}

// Accumulator -> scaled value in the blend type (double for DOUBLE data, else float).
template <class B, class Acc>
__device__ __forceinline__ B to_blend(Acc a) {
    return static_cast<B>(a);
}

// Accumulation: fp64 for DOUBLE, int32 for 8-bit data, fp32 otherwise.
template <class T>
using AccT = std::conditional_t<std::is_same<T, double>::value, double,
                                std::conditional_t<(sizeof(T) == 1), int, float>>;

template <class T>
__device__ __forceinline__ auto widen(T v) {
    if constexpr (sizeof(T) == 1) {
        return static_cast<int>(v);
    } else {
        return Io<T>::in(v);
    }
}

// A blended value stored as T with the rounding of core::store_elem (the reference's).
template <class T>
__device__ __forceinline__ T narrow(double v) {
    if constexpr (std::is_same<T, double>::value) {
        return v;
    } else if constexpr (std::is_same<T, float>::value) {
        return static_cast<float>(v);
    } else if constexpr (std::is_same<T, int8_t>::value) {
        return static_cast<int8_t>(core::saturate_int(v, -128.0, 127.0));
    } else {
        return Io<T>::out(static_cast<float>(v));
    }
}

// out = alpha * acc + beta * out, out read only when beta != 0.
template <class T, class Acc>
__device__ __forceinline__ void blend_store(T* out, Acc acc, double alpha, double beta) {
    double v = alpha * static_cast<double>(acc);
    if (beta != 0.0) v += beta * static_cast<double>(widen(*out));
    *out = narrow<T>(v);
}

// ---- forward: one thread per y element, W fastest ----
template <class TX, class TW, class TY, class Acc>
__global__ void conv_fwd_kernel(Geo g, const TX* __restrict__ x, Ten xt, const TW* __restrict__ w, Ten wt,
                                TY* y, Ten yt, int64_t total, double alpha, double beta, Epi e) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        int64_t r = i;
        const int64_t ow = r % g.out[2]; r /= g.out[2];
        const int64_t oh = r % g.out[1]; r /= g.out[1];
        const int64_t od = r % g.out[0]; r /= g.out[0];
        const int64_t k = r % g.k;
        const int64_t n = r / g.k;
        const int64_t c0 = k / g.kg * g.cg;
        Acc acc = 0;
        for (int64_t t = 0; t < g.filt[0]; ++t) {
            const int64_t id = od * g.stride[0] - g.pad[0] + t * g.dil[0];
            if (id < 0 || id >= g.in[0]) continue;
            for (int64_t rr = 0; rr < g.filt[1]; ++rr) {
                const int64_t ih = oh * g.stride[1] - g.pad[1] + rr * g.dil[1];
                if (ih < 0 || ih >= g.in[1]) continue;
                for (int64_t s = 0; s < g.filt[2]; ++s) {
                    const int64_t iw = ow * g.stride[2] - g.pad[2] + s * g.dil[2];
                    if (iw < 0 || iw >= g.in[2]) continue;
                    const int64_t ft = g.tap(0, t), fr = g.tap(1, rr), fs = g.tap(2, s);
                    for (int64_t c = 0; c < g.cg; ++c)
                        acc += static_cast<Acc>(widen(x[xt.at(n, c0 + c, id, ih, iw)])) *
                               static_cast<Acc>(widen(w[wt.at(k, c, ft, fr, fs)]));
                }
            }
        }
        const int64_t off = yt.at(n, k, od, oh, ow);
        double v = alpha * static_cast<double>(acc);
        if (e.enabled) {
            if (e.alpha2 != 0.0) v += e.alpha2 * core::load_elem(e.z, e.zt.at(n, k, od, oh, ow), e.z_dtype);
            v += core::load_elem(e.bias, k * e.bias_stride, e.bias_dtype);
            if (e.relu && !(v > 0.0 || (e.propagate_nan && v != v))) v = 0.0;
        } else if (beta != 0.0) {
            v += beta * static_cast<double>(widen(y[off]));
        }
        y[off] = narrow<TY>(v);
    }
}

// ---- backward data: one thread per dx element ----
template <class T, class Acc>
__global__ void conv_bwd_data_kernel(Geo g, T* dx, Ten xt, const T* __restrict__ w, Ten wt, const T* __restrict__ dy,
                                     Ten yt, int64_t total, double alpha, double beta) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        int64_t r = i;
        const int64_t iw = r % g.in[2]; r /= g.in[2];
        const int64_t ih = r % g.in[1]; r /= g.in[1];
        const int64_t id = r % g.in[0]; r /= g.in[0];
        const int64_t c = r % g.c;
        const int64_t n = r / g.c;
        const int64_t grp = c / g.cg, cl = c % g.cg;
        Acc acc = 0;
        for (int64_t t = 0; t < g.filt[0]; ++t) {
            const int64_t nd = id + g.pad[0] - t * g.dil[0];
            if (nd < 0 || nd % g.stride[0] != 0 || nd / g.stride[0] >= g.out[0]) continue;
            for (int64_t rr = 0; rr < g.filt[1]; ++rr) {
                const int64_t nh = ih + g.pad[1] - rr * g.dil[1];
                if (nh < 0 || nh % g.stride[1] != 0 || nh / g.stride[1] >= g.out[1]) continue;
                for (int64_t s = 0; s < g.filt[2]; ++s) {
                    const int64_t nw = iw + g.pad[2] - s * g.dil[2];
                    if (nw < 0 || nw % g.stride[2] != 0 || nw / g.stride[2] >= g.out[2]) continue;
                    const int64_t ft = g.tap(0, t), fr = g.tap(1, rr), fs = g.tap(2, s);
                    for (int64_t kl = 0; kl < g.kg; ++kl) {
                        const int64_t k = grp * g.kg + kl;
                        acc += static_cast<Acc>(widen(dy[yt.at(n, k, nd / g.stride[0], nh / g.stride[1],
                                                               nw / g.stride[2])])) *
                               static_cast<Acc>(widen(w[wt.at(k, cl, ft, fr, fs)]));
                    }
                }
            }
        }
        blend_store(dx + xt.at(n, c, id, ih, iw), acc, alpha, beta);
    }
}

// ---- backward filter: one block per dw element, threads over (n, output pixel) ----
constexpr int kWgradThreads = 256;

// Sums `acc` over the block into part[0] (every thread then reads it after the barrier).
template <class Acc>
__device__ __forceinline__ void block_sum(Acc* part, Acc acc) {
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kWgradThreads / 2; half > 0; half /= 2) {
        if (static_cast<int>(threadIdx.x) < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
}

template <class T, class Acc>
__global__ void __launch_bounds__(kWgradThreads)
    conv_bwd_filter_kernel(Geo g, const T* __restrict__ x, Ten xt, T* dw, Ten wt, const T* __restrict__ dy, Ten yt,
                           int64_t total, double alpha, double beta) {
    __shared__ Acc part[kWgradThreads];
    const int64_t pixels = g.out[0] * g.out[1] * g.out[2];
    const int64_t reduce = g.n * pixels;
    for (int64_t e = blockIdx.x; e < total; e += gridDim.x) {
        int64_t r = e;
        const int64_t s = r % g.filt[2]; r /= g.filt[2];
        const int64_t rr = r % g.filt[1]; r /= g.filt[1];
        const int64_t t = r % g.filt[0]; r /= g.filt[0];
        const int64_t cl = r % g.cg;
        const int64_t k = r / g.cg;
        const int64_t c = k / g.kg * g.cg + cl;
        Acc acc = 0;
        for (int64_t j = threadIdx.x; j < reduce; j += blockDim.x) {
            int64_t q = j;
            const int64_t ow = q % g.out[2]; q /= g.out[2];
            const int64_t oh = q % g.out[1]; q /= g.out[1];
            const int64_t od = q % g.out[0];
            const int64_t n = q / g.out[0];
            const int64_t id = od * g.stride[0] - g.pad[0] + t * g.dil[0];
            const int64_t ih = oh * g.stride[1] - g.pad[1] + rr * g.dil[1];
            const int64_t iw = ow * g.stride[2] - g.pad[2] + s * g.dil[2];
            if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) continue;
            acc += static_cast<Acc>(widen(x[xt.at(n, c, id, ih, iw)])) *
                   static_cast<Acc>(widen(dy[yt.at(n, k, od, oh, ow)]));
        }
        block_sum(part, acc);
        if (threadIdx.x == 0) {
            const int64_t off = wt.at(k, cl, g.tap(0, t), g.tap(1, rr), g.tap(2, s));
            blend_store(dw + off, part[0], alpha, beta);
        }
        __syncthreads();
    }
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>(n < (1 << 30) ? (n > 0 ? n : 1) : (1 << 30)); }

template <class TX, class TW, class TY, class Acc>
Status run_fwd(const core::Handle& h, const ConvProblem& p) {
    const int64_t total = p.y.num_elements();
    conv_fwd_kernel<TX, TW, TY, Acc><<<grid_for(total), 256, 0, h.stream>>>(
        geo(p), static_cast<const TX*>(p.x_data), ten(p.x), static_cast<const TW*>(p.w_data), ten(p.w),
        static_cast<TY*>(p.y_data), ten(p.y), total, p.alpha, p.beta, epi(p));
    return launched("conv_fwd_kernel");
}

template <class T, class Acc>
Status run_bwd(const core::Handle& h, const ConvProblem& p) {
    if (p.kind == ConvKind::bwd_data) {
        const int64_t total = p.x.num_elements();
        conv_bwd_data_kernel<T, Acc><<<grid_for(total), 256, 0, h.stream>>>(
            geo(p), static_cast<T*>(p.x_data), ten(p.x), static_cast<const T*>(p.w_data), ten(p.w),
            static_cast<const T*>(p.y_data), ten(p.y), total, p.alpha, p.beta);
        return launched("conv_bwd_data_kernel");
    }
    const int64_t total = p.w.num_elements();
    conv_bwd_filter_kernel<T, Acc><<<blocks_for(total), kWgradThreads, 0, h.stream>>>(
        geo(p), static_cast<const T*>(p.x_data), ten(p.x), static_cast<T*>(p.w_data), ten(p.w),
        static_cast<const T*>(p.y_data), ten(p.y), total, p.alpha, p.beta);
    return launched("conv_bwd_filter_kernel");
}

// 8-bit forward: x INT8 or UINT8, w INT8, y INT8 or FLOAT, int32 accumulation.
template <class TX>
Status run_fwd_int8(const core::Handle& h, const ConvProblem& p) {
    if (p.y.dtype == CUDNN_DATA_FLOAT) return run_fwd<TX, int8_t, float, int>(h, p);
    return run_fwd<TX, int8_t, int8_t, int>(h, p);
}

class CudaConvGeneric final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cuda_conv_generic"; }
    Status check(const ConvProblem& p) const override {
        const bool int8 = p.x.dtype == CUDNN_DATA_INT8 || p.x.dtype == CUDNN_DATA_UINT8;
        ODNN_REQUIRE_SUPPORTED(!int8 || p.kind == ConvKind::fwd, "8-bit data is forward only");
        return Status::ok();
    }
    Status execute(const core::Handle& h, const ConvProblem& p) const override {
        if (p.kind == ConvKind::fwd) {
            switch (p.x.dtype) {
                case CUDNN_DATA_INT8: return run_fwd_int8<int8_t>(h, p);
                case CUDNN_DATA_UINT8: return run_fwd_int8<uint8_t>(h, p);
                default: break;
            }
            return with_float_type(p.x.dtype, [&](auto tag) -> Status {
                using T = typename decltype(tag)::type;
                using Acc = AccT<T>;
                return run_fwd<T, T, T, Acc>(h, p);
            });
        }
        return with_float_type(p.x.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using Acc = AccT<T>;
            return run_bwd<T, Acc>(h, p);
        });
    }
};

// ---- cudnnConvolutionBackwardBias: one block per output channel ----
template <class T, class Acc>
__global__ void __launch_bounds__(kWgradThreads)
    conv_bias_grad_kernel(const T* __restrict__ dy, Ten yt, int64_t n, int64_t k, int64_t d, int64_t h, int64_t w,
                          T* db, int64_t db_stride, double alpha, double beta) {
    __shared__ Acc part[kWgradThreads];
    const int64_t reduce = n * d * h * w;
    for (int64_t kk = blockIdx.x; kk < k; kk += gridDim.x) {
        Acc acc = 0;
        for (int64_t j = threadIdx.x; j < reduce; j += blockDim.x) {
            int64_t q = j;
            const int64_t iw = q % w; q /= w;
            const int64_t ih = q % h; q /= h;
            const int64_t id = q % d;
            acc += static_cast<Acc>(widen(dy[yt.at(q / d, kk, id, ih, iw)]));
        }
        block_sum(part, acc);
        if (threadIdx.x == 0) {
            blend_store(db + kk * db_stride, part[0], alpha, beta);
        }
        __syncthreads();
    }
}

class CudaConvBiasGrad final : public core::Impl<core::ConvBiasGradProblem> {
public:
    const char* name() const override { return "cuda_conv_bias_grad"; }
    Status execute(const core::Handle& h, const core::ConvBiasGradProblem& p) const override {
        return with_float_type(p.dy.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using Acc = AccT<T>;
            const int64_t* d = p.dy.dims;
            conv_bias_grad_kernel<T, Acc><<<blocks_for(d[1]), kWgradThreads, 0, h.stream>>>(
                static_cast<const T*>(p.dy_data), ten(p.dy), d[0], d[1], d[2], d[3], d[4],
                static_cast<T*>(p.db_data), p.db.strides[1], p.alpha, p.beta);
            return launched("conv_bias_grad_kernel");
        });
    }
};

// ---- cudnnIm2Col: column-major (N * out pixels) x (C * taps), taps as the filter's ----
__global__ void im2col_kernel(Geo g, const void* x, Ten xt, int dtype, void* col, int64_t rows, int64_t total) {
    const int64_t taps = g.filt[0] * g.filt[1] * g.filt[2];
    ODNN_GRID_STRIDE_LOOP(i, total) {
        const int64_t row = i % rows, cidx = i / rows;
        int64_t q = row;
        const int64_t ow = q % g.out[2]; q /= g.out[2];
        const int64_t oh = q % g.out[1]; q /= g.out[1];
        const int64_t od = q % g.out[0];
        const int64_t n = q / g.out[0];
        const int64_t c = cidx / taps, tp = cidx % taps;
        const int64_t t = g.tap(0, tp / (g.filt[1] * g.filt[2]));
        const int64_t r = g.tap(1, tp / g.filt[2] % g.filt[1]);
        const int64_t s = g.tap(2, tp % g.filt[2]);
        const int64_t id = od * g.stride[0] - g.pad[0] + t * g.dil[0];
        const int64_t ih = oh * g.stride[1] - g.pad[1] + r * g.dil[1];
        const int64_t iw = ow * g.stride[2] - g.pad[2] + s * g.dil[2];
        double v = 0.0;
        if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2])
            v = core::load_elem(x, xt.at(n, c, id, ih, iw), dtype);
        core::store_elem(col, i, dtype, v);
    }
}

class CudaIm2Col final : public core::Impl<core::Im2ColProblem> {
public:
    const char* name() const override { return "cuda_im2col"; }
    Status execute(const core::Handle& h, const core::Im2ColProblem& q) const override {
        const ConvProblem& p = q.conv;
        const int64_t rows = p.n * p.out_pixels();
        const int64_t total = rows * p.c * p.filt_pixels();
        im2col_kernel<<<grid_for(total), 256, 0, h.stream>>>(geo(p), p.x_data, ten(p.x), p.x.dtype, q.col, rows,
                                                            total);
        return launched("im2col_kernel");
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, ConvProblem, CudaConvGeneric, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::ConvBiasGradProblem, CudaConvBiasGrad, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::Im2ColProblem, CudaIm2Col, core::kPriorityGeneric);

}  // namespace odnn::cuda
