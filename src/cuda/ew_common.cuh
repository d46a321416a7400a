// The element-wise engine of the CUDA backend: activation, add, op-tensor and transform
// kernels are a functor applied over operands described by core::EwGeometry.
//
//   ew_flat_kernel     every full operand dense and laid out as the output (after
//                      core::ew_simplify), at most one broadcast input: 16-byte vector
//                      loads and stores, the broadcast element found with 32-bit
//                      multiply-shift division. Moves each byte of every full operand once.
//   ew_strided_kernel  any strides, typed loads, 32-bit index math (a legacy tensor spans
//                      fewer than 2^31 elements).
//   ew_generic_kernel  any strides and any element types, through load_elem / store_elem
//                      in double: the fallback for type pairs without a typed instance.
//
// Math runs in float for FLOAT, HALF, BFLOAT16 and INT8 data, in double for DOUBLE.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/blend.hpp"
#include "core/cuda_runtime.hpp"
#include "core/elem_access.hpp"
#include "core/tensor_ops.hpp"
#include "cuda/launch.cuh"

namespace odnn::cuda {

// ---- 32-bit division by a runtime constant (n < 2^31) ----

struct FastDivmod {
    uint32_t d = 1, m = 0, s = 0;
    FastDivmod() = default;
    explicit FastDivmod(uint32_t divisor) : d(divisor) {
        while ((uint64_t{1} << s) < d) ++s;
        m = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
    }
    __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, m) + n) >> s; }
    __device__ __forceinline__ uint32_t mod(uint32_t n) const { return n - div(n) * d; }
};

// ---- Element types ----

template <class T>
struct AccOf {
    using type = float;
};
template <>
struct AccOf<double> {
    using type = double;
};
template <class TOut, class TIn>
using AccFor = std::conditional_t<std::is_same<TOut, double>::value || std::is_same<TIn, double>::value, double, float>;

__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }
__device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_acc(int8_t v) { return static_cast<float>(v); }

// Accumulator value to storage type (round to nearest even; integers saturate, NaN -> 0,
// as core::store_elem).
template <class T>
struct StoreAs;
template <>
struct StoreAs<float> {
    __device__ static float f(float v) { return v; }
    __device__ static float f(double v) { return static_cast<float>(v); }
};
template <>
struct StoreAs<double> {
    __device__ static double f(double v) { return v; }
};
template <>
struct StoreAs<__half> {
    __device__ static __half f(float v) { return __float2half_rn(v); }
    __device__ static __half f(double v) { return __float2half_rn(static_cast<float>(v)); }
};
template <>
struct StoreAs<__nv_bfloat16> {
    __device__ static __nv_bfloat16 f(float v) { return __float2bfloat16_rn(v); }
    __device__ static __nv_bfloat16 f(double v) { return __float2bfloat16_rn(static_cast<float>(v)); }
};
template <>
struct StoreAs<int8_t> {
    __device__ static int8_t f(float v) {
        if (v != v) return 0;
        return static_cast<int8_t>(__float2int_rn(fminf(fmaxf(v, -128.0f), 127.0f)));
    }
    __device__ static int8_t f(double v) { return f(static_cast<float>(v)); }
};
template <class T, class A>
__device__ __forceinline__ T from_acc(A v) {
    return StoreAs<T>::f(v);
}

// The cuDNN data type of a storage type.
template <class T>
constexpr int dtype_of() {
    return std::is_same<T, float>::value            ? CUDNN_DATA_FLOAT
           : std::is_same<T, double>::value         ? CUDNN_DATA_DOUBLE
           : std::is_same<T, __half>::value         ? CUDNN_DATA_HALF
           : std::is_same<T, __nv_bfloat16>::value  ? CUDNN_DATA_BFLOAT16
                                                    : CUDNN_DATA_INT8;
}

template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
    T v[N];
};

// ---- Kernel arguments ----

constexpr int kEwMaxInputs = 3;
constexpr int kEwBlock = 256;

struct FlatArgs {
    void* out;
    const void* in[kEwMaxInputs];
    int64_t n;
    int bcast;                     // input index of the broadcast operand, -1 if none
    bool bcast_uniform;            // inner % VEC == 0: a vector's lanes share one element
    bool bcast_contig;             // inner == 1, mid % VEC == 0: lanes read consecutive elements
    FastDivmod inner, mid;         // broadcast element of output i: (i / inner) % mid
};

struct StridedArgs {
    void* out;
    const void* in[kEwMaxInputs];
    int nb;
    uint32_t n;
    FastDivmod dims[core::kMaxOperandDims];
    uint32_t strides[kEwMaxInputs + 1][core::kMaxOperandDims];  // [0] output, [1 + k] input k
    int dtypes[kEwMaxInputs + 1];                                // for the generic kernel
};

// A functor F has: static constexpr int kInputs; A beta (0: the output is not read);
// and __device__ A operator()(const A* in) const giving alpha * result.

// One broadcast operand's VEC lanes for the output vector starting at element i0.
template <int VEC, class TIn>
__device__ __forceinline__ Vec<TIn, VEC> flat_load_bcast(const FlatArgs& a, const TIn* p, uint32_t i0) {
    Vec<TIn, VEC> e;
    if (a.bcast_uniform) {
        const TIn b = p[a.mid.mod(a.inner.div(i0))];
#pragma unroll
        for (int j = 0; j < VEC; ++j) e.v[j] = b;
    } else if (a.bcast_contig) {
        e = *reinterpret_cast<const Vec<TIn, VEC>*>(p + a.mid.mod(i0));
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) e.v[j] = p[a.mid.mod(a.inner.div(i0 + j))];
    }
    return e;
}

// Every operand as VEC-element vectors: vector v covers elements [v * VEC, v * VEC + VEC).
// 32-bit indices (a legacy tensor has fewer than 2^31 elements). The operands are held
// as whole Vec structs (indexed only by unrolled constants, so they stay in registers),
// and the output is read only when beta != 0. BCAST: the index of the broadcast input
// (a compile-time constant, so no operand is indexed at run time), -1 for none.
template <int VEC, class TOut, class TIn, class F, int BCAST>
__device__ __forceinline__ void flat_vector(const FlatArgs& a, const F& f, uint32_t v) {
    using A = AccFor<TOut, TIn>;
    constexpr int NIN = F::kInputs;
    Vec<TIn, VEC> e[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) {
        const TIn* p = static_cast<const TIn*>(a.in[k]);
        if (k == BCAST) e[k] = flat_load_bcast<VEC>(a, p, v * VEC);
        else e[k] = reinterpret_cast<const Vec<TIn, VEC>*>(p)[v];
    }
    Vec<TOut, VEC>* out = static_cast<Vec<TOut, VEC>*>(a.out);
    Vec<TOut, VEC> prior;
    const bool blend = f.beta != A(0);
    if (blend) prior = out[v];
    Vec<TOut, VEC> r;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        A x[NIN];
#pragma unroll
        for (int k = 0; k < NIN; ++k) x[k] = to_acc(e[k].v[j]);
        A res = f(x);
        if (blend) res += f.beta * static_cast<A>(to_acc(prior.v[j]));
        r.v[j] = from_acc<TOut>(res);
    }
    out[v] = r;
}

// Grid-stride over the vectors, then the last n % VEC elements one per thread.
template <int VEC, class TOut, class TIn, class F, int BCAST>
__global__ void __launch_bounds__(kEwBlock) ew_flat_kernel(FlatArgs a, F f) {
    using A = AccFor<TOut, TIn>;
    constexpr int NIN = F::kInputs;
    const uint32_t n = static_cast<uint32_t>(a.n);
    const uint32_t nvec = n / VEC;
    const uint32_t step = gridDim.x * blockDim.x;
    const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (uint32_t v = tid; v < nvec; v += step) flat_vector<VEC, TOut, TIn, F, BCAST>(a, f, v);
    if (VEC > 1) {
        TOut* out = static_cast<TOut*>(a.out);
        for (uint32_t i = nvec * VEC + tid; i < n; i += step) {
            A x[NIN];
#pragma unroll
            for (int k = 0; k < NIN; ++k) {
                const TIn* p = static_cast<const TIn*>(a.in[k]);
                x[k] = to_acc(k == BCAST ? p[a.mid.mod(a.inner.div(i))] : p[i]);
            }
            A res = f(x);
            if (f.beta != A(0)) res += f.beta * static_cast<A>(to_acc(out[i]));
            out[i] = from_acc<TOut>(res);
        }
    }
}

template <class TOut, class TIn, class F>
__global__ void __launch_bounds__(kEwBlock) ew_strided_kernel(StridedArgs a, F f) {
    using A = AccFor<TOut, TIn>;
    constexpr int NIN = F::kInputs;
    TOut* out = static_cast<TOut*>(a.out);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += gridDim.x * blockDim.x) {
        uint32_t off[NIN + 1] = {};
        uint32_t r = i;
        for (int d = a.nb - 1; d >= 0; --d) {
            const uint32_t q = a.dims[d].div(r);
            const uint32_t c = r - q * a.dims[d].d;
            r = q;
#pragma unroll
            for (int k = 0; k <= NIN; ++k) off[k] += c * a.strides[k][d];
        }
        A x[NIN];
#pragma unroll
        for (int k = 0; k < NIN; ++k) x[k] = to_acc(static_cast<const TIn*>(a.in[k])[off[k + 1]]);
        A res = f(x);
        if (f.beta != A(0)) res += f.beta * static_cast<A>(to_acc(out[off[0]]));
        out[off[0]] = from_acc<TOut>(res);
    }
}

// Any element types: values in double through the shared load / store helpers.
template <class F>
__global__ void __launch_bounds__(kEwBlock) ew_generic_kernel(StridedArgs a, F f) {
    constexpr int NIN = F::kInputs;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += gridDim.x * blockDim.x) {
        uint32_t off[NIN + 1] = {};
        uint32_t r = i;
        for (int d = a.nb - 1; d >= 0; --d) {
            const uint32_t q = a.dims[d].div(r);
            const uint32_t c = r - q * a.dims[d].d;
            r = q;
#pragma unroll
            for (int k = 0; k <= NIN; ++k) off[k] += c * a.strides[k][d];
        }
        double x[NIN];
#pragma unroll
        for (int k = 0; k < NIN; ++k) x[k] = core::load_elem(a.in[k], off[k + 1], a.dtypes[k + 1]);
        double res = f(x);
        if (f.beta != 0.0) res += f.beta * core::load_elem(a.out, off[0], a.dtypes[0]);
        core::store_elem(a.out, off[0], a.dtypes[0], res);
    }
}

// ---- Host side ----

// Operand 0 is the output; inputs follow (at most kEwMaxInputs). All share the output's
// dims; broadcast inputs have stride 0 on their broadcast dims.
struct EwOperands {
    int n = 0;
    const core::Operand* ops[kEwMaxInputs + 1] = {};
    const void* data[kEwMaxInputs + 1] = {};
};

inline bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

StridedArgs make_strided_args(const core::EwGeometry& g, const EwOperands& e);

template <int VEC, class TOut, class TIn, class F, int BCAST>
void launch_flat(const FlatArgs& a, const F& f, bool vec_ok, cudaStream_t stream) {
    if (vec_ok && VEC > 1)
        ew_flat_kernel<VEC, TOut, TIn, F, BCAST><<<grid_for(a.n / VEC + 1, kEwBlock), kEwBlock, 0, stream>>>(a, f);
    else
        ew_flat_kernel<1, TOut, TIn, F, BCAST><<<grid_for(a.n, kEwBlock), kEwBlock, 0, stream>>>(a, f);
}

// Launches F over the operands on `stream`: the flat kernel where the geometry allows it
// (vectorised when every pointer is aligned), else the strided one.
template <class TOut, class TIn, class F>
core::Status launch_ew(const EwOperands& e, F f, cudaStream_t stream, const char* name) {
    static_assert(F::kInputs + 1 <= kEwMaxInputs + 1, "too many inputs");
    const core::EwGeometry g = core::ew_simplify(e.ops, e.n);
    const core::EwFlat flat = core::ew_flat(g);
    const int64_t n = g.count();
    if (n == 0) return core::Status::ok();
    if (flat.ok && n <= INT32_MAX) {
        constexpr int VEC = 16 / (sizeof(TOut) > sizeof(TIn) ? sizeof(TOut) : sizeof(TIn));
        FlatArgs a{};
        a.out = const_cast<void*>(e.data[0]);
        for (int k = 1; k < e.n; ++k) a.in[k - 1] = e.data[k];
        a.n = n;
        a.bcast = flat.bcast > 0 ? flat.bcast - 1 : -1;
        a.inner = FastDivmod(static_cast<uint32_t>(flat.inner));
        a.mid = FastDivmod(static_cast<uint32_t>(flat.mid));
        a.bcast_uniform = flat.inner % VEC == 0;
        a.bcast_contig = flat.inner == 1 && flat.mid % VEC == 0;
        bool vec_ok = aligned(a.out, sizeof(TOut) * VEC);
        for (int k = 0; k + 1 < e.n; ++k)
            if (k != a.bcast || a.bcast_contig) vec_ok = vec_ok && aligned(a.in[k], sizeof(TIn) * VEC);
        if (!(vec_ok && VEC > 1)) a.bcast_uniform = a.bcast_contig = false;
        if (a.bcast < 0) launch_flat<VEC, TOut, TIn, F, -1>(a, f, vec_ok, stream);
        else if (a.bcast == 0) launch_flat<VEC, TOut, TIn, F, 0>(a, f, vec_ok, stream);
        else if constexpr (F::kInputs > 1) {
            if (a.bcast == 1) launch_flat<VEC, TOut, TIn, F, 1>(a, f, vec_ok, stream);
            else if constexpr (F::kInputs > 2) launch_flat<VEC, TOut, TIn, F, 2>(a, f, vec_ok, stream);
        }
        return core::cuda_check_launch(name);
    }
    ew_strided_kernel<TOut, TIn, F><<<grid_for(n, kEwBlock), kEwBlock, 0, stream>>>(make_strided_args(g, e), f);
    return core::cuda_check_launch(name);
}

template <class F>
core::Status launch_ew_generic(const EwOperands& e, F f, cudaStream_t stream, const char* name) {
    const core::EwGeometry g = core::ew_simplify(e.ops, e.n);
    const int64_t n = g.count();
    if (n == 0) return core::Status::ok();
    ew_generic_kernel<F><<<grid_for(n, kEwBlock), kEwBlock, 0, stream>>>(make_strided_args(g, e), f);
    return core::cuda_check_launch(name);
}

inline StridedArgs make_strided_args(const core::EwGeometry& g, const EwOperands& e) {
    StridedArgs a{};
    a.out = const_cast<void*>(e.data[0]);
    for (int k = 1; k < e.n; ++k) a.in[k - 1] = e.data[k];
    a.nb = g.nb_dims;
    a.n = static_cast<uint32_t>(g.count());
    for (int d = 0; d < g.nb_dims; ++d) {
        a.dims[d] = FastDivmod(static_cast<uint32_t>(g.dims[d]));
        for (int k = 0; k < e.n; ++k) a.strides[k][d] = static_cast<uint32_t>(g.strides[k][d]);
    }
    for (int k = 0; k < e.n; ++k) a.dtypes[k] = e.ops[k]->dtype;
    return a;
}

}  // namespace odnn::cuda
