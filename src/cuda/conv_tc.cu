// Tensor-core convolutions of the CUDA backend: the problems the Hopper implicit-GEMM
// kernels (conv_sm90.hpp) serve, routed to them; everything else is left to the generic
// kernels (conv_generic.cu), which rank below.
//
// Taken: 2-D (and 1-D) cross-correlations without groups, HALF or BFLOAT16 data with
// fp32 (or, for HALF, fp16) compute, channels-last dense tensors (NHWC images, filters
// in the NHWC format), C and K multiples of 8, any padding / stride / dilation CUTLASS's
// TMA im2col accepts (backward data: stride 1), a math type that allows tensor cores,
// no fused epilogue; on a compute capability 9.0 device. Algorithms: forward
// IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM, backward data ALGO_0 and ALGO_1, backward
// filter ALGO_0, ALGO_1 and ALGO_3. Data pointers that are not 16-byte aligned (only
// known at run time) make the call run the generic kernel, which needs no workspace.
//
// cuda_conv_sm90_packed takes the rest of those problems whatever their layout: NCHW
// or strided tensors, filters in the NCHW format, C or K not multiples of 8,
// CUDNN_CONVOLUTION mode and the fused bias + activation epilogue. It packs the inputs
// into dense channels-last copies in the workspace (channels zero-padded to a multiple
// of 8, the filter flipped for CUDNN_CONVOLUTION), runs the kernel into a dense
// workspace output and writes that back through alpha / beta (or the epilogue).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/conv_problem.hpp"
#include "core/elem_access.hpp"
#include "core/cuda_runtime.hpp"
#include "core/dtype.hpp"
#include "core/impl_registry.hpp"
#include "cuda/conv_sm90.hpp"
#include "cuda/launch.cuh"

namespace odnn::cuda {
namespace {

using core::ConvKind;
using core::ConvProblem;
using core::ConvTensor;
using core::Status;
using core::StatusOr;

// Compute capability of the current device, cached per device.
int device_cc() {
    static std::mutex mu;
    static int cache[64];
    static bool init = false;
    std::lock_guard<std::mutex> lock(mu);
    if (!init) {
        for (int& c : cache) c = -1;
        init = true;
    }
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
        cudaGetLastError();
        return 0;
    }
    if (cache[dev] < 0) {
        int major = 0, minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
            cudaGetLastError();
            return 0;
        }
        cache[dev] = major * 10 + minor;
    }
    return cache[dev];
}

// Dense channels-last: C innermost, then W, H, (D), N.
bool dense_nhwc(const ConvTensor& t) {
    if (t.vect != 1) return false;
    const int64_t* d = t.dims;
    const int64_t* s = t.strides;
    return s[1] == 1 && s[4] == d[1] && s[3] == d[4] * d[1] && (d[2] == 1 || s[2] == d[3] * d[4] * d[1]) &&
           s[0] == d[2] * d[3] * d[4] * d[1];
}

bool algo_taken(const ConvProblem& p) {
    switch (p.kind) {
        case ConvKind::fwd:
            return p.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
                   p.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        case ConvKind::bwd_data:
            return p.algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || p.algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
        case ConvKind::bwd_filter:
            return p.algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || p.algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
                   p.algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
    }
    return false;
}

sm90::TcOp op_of(ConvKind k) {
    return k == ConvKind::fwd ? sm90::TcOp::fprop : k == ConvKind::bwd_data ? sm90::TcOp::dgrad : sm90::TcOp::wgrad;
}

sm90::TcProblem tc_problem(const ConvProblem& p) {
    sm90::TcProblem t;
    t.n = static_cast<int>(p.n);
    t.h = static_cast<int>(p.in[1]);
    t.w = static_cast<int>(p.in[2]);
    t.c = static_cast<int>(p.c);
    t.k = static_cast<int>(p.k);
    t.r = static_cast<int>(p.filt[1]);
    t.s = static_cast<int>(p.filt[2]);
    for (int i = 0; i < 2; ++i) {
        t.pad[i] = static_cast<int>(p.pad[i + 1]);
        t.stride[i] = static_cast<int>(p.stride[i + 1]);
        t.dil[i] = static_cast<int>(p.dil[i + 1]);
    }
    switch (p.kind) {
        case ConvKind::fwd:
            t.a = p.x_data;
            t.b = p.w_data;
            t.out = p.y_data;
            break;
        case ConvKind::bwd_data:
            t.a = p.y_data;
            t.b = p.w_data;
            t.out = p.x_data;
            break;
        case ConvKind::bwd_filter:
            t.a = p.y_data;
            t.b = p.x_data;
            t.out = p.w_data;
            break;
    }
    t.alpha = static_cast<float>(p.alpha);
    t.beta = static_cast<float>(p.beta);
    t.workspace = p.workspace;
    return t;
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

sm90::TcType type_of(const ConvProblem& p) {
    return p.x.dtype == CUDNN_DATA_HALF ? sm90::TcType::f16 : sm90::TcType::bf16;
}

// What both tensor-core implementations need, whatever the layout.
Status check_common(const ConvProblem& p) {
    ODNN_REQUIRE_SUPPORTED(algo_taken(p), "algo %s is not an implicit-GEMM algorithm",
                           core::conv_algo_name(p.kind, p.algo));
    const cudnnDataType_t dt = p.x.dtype;
    ODNN_REQUIRE_SUPPORTED(dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16, "data type %s is not HALF or BFLOAT16",
                           core::dtype_name(dt));
    ODNN_REQUIRE_SUPPORTED(p.w.dtype == dt && p.y.dtype == dt, "mixed data types");
    ODNN_REQUIRE_SUPPORTED(p.x.vect == 1 && p.y.vect == 1 && p.w.vect == 1, "vectorised (VECT_C) tensors");
    ODNN_REQUIRE_SUPPORTED(p.compute == CUDNN_DATA_FLOAT || (p.compute == CUDNN_DATA_HALF && dt == CUDNN_DATA_HALF),
                           "compute type %s", core::dtype_name(p.compute));
    ODNN_REQUIRE_SUPPORTED(p.math != CUDNN_FMA_MATH, "CUDNN_FMA_MATH excludes tensor cores");
    ODNN_REQUIRE_SUPPORTED(p.groups == 1, "groups = %lld", static_cast<long long>(p.groups));
    ODNN_REQUIRE_SUPPORTED(p.in[0] == 1 && p.filt[0] == 1 && p.out[0] == 1, "3-D problem");
    ODNN_REQUIRE_SUPPORTED(p.kind != ConvKind::bwd_data || (p.stride[1] == 1 && p.stride[2] == 1),
                           "backward data with stride > 1");
    const int64_t lim = int64_t{1} << 31;
    ODNN_REQUIRE_SUPPORTED(p.x.num_elements() < lim && p.y.num_elements() < lim && p.w.num_elements() < lim,
                           "tensors of 2^31 or more elements");
    const int cc = device_cc();
    ODNN_REQUIRE_SUPPORTED(cc == 90, "the sm_90a kernels need compute capability 9.0 (device has %d.%d)", cc / 10,
                           cc % 10);
    return Status::ok();
}

class CudaConvSm90 final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cuda_conv_sm90"; }

    Status check(const ConvProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_common(p));
        ODNN_REQUIRE_SUPPORTED(!p.flip, "CUDNN_CONVOLUTION mode (flipped filter)");
        ODNN_REQUIRE_SUPPORTED(!p.epi.enabled, "fused bias and activation");
        ODNN_REQUIRE_SUPPORTED(p.c % 8 == 0 && p.k % 8 == 0, "C = %lld and K = %lld must be multiples of 8",
                               static_cast<long long>(p.c), static_cast<long long>(p.k));
        ODNN_REQUIRE_SUPPORTED(dense_nhwc(p.x) && dense_nhwc(p.y), "x and y are not dense NHWC");
        ODNN_REQUIRE_SUPPORTED(p.w_nhwc && dense_nhwc(p.w), "the filter is not dense in the NHWC format");
        size_t unused = 0;
        return sm90::dispatch(op_of(p.kind), type_of(p), tc_problem(p), sm90::TcCall::check, &unused);
    }

    size_t workspace_size(const ConvProblem& p) const override {
        size_t bytes = 0;
        if (!sm90::dispatch(op_of(p.kind), type_of(p), tc_problem(p), sm90::TcCall::workspace, &bytes).is_ok())
            return 0;
        return bytes;
    }

    bool tensor_cores(const ConvProblem&) const override { return true; }

    Status execute(const core::Handle& h, const ConvProblem& p) const override {
        if (!aligned16(p.x_data) || !aligned16(p.w_data) || !aligned16(p.y_data)) return run_generic(h, p);
        sm90::TcProblem t = tc_problem(p);
        t.stream = h.stream;
        size_t unused = 0;
        return sm90::dispatch(op_of(p.kind), type_of(p), t, sm90::TcCall::run, &unused);
    }

private:
    static Status run_generic(const core::Handle& h, const ConvProblem& p) {
        for (const auto* impl : core::ImplRegistry<ConvProblem>::get().list(core::BackendKind::cuda))
            if (std::strcmp(impl->name(), "cuda_conv_generic") == 0) return impl->execute(h, p);
        return Status(CUDNN_STATUS_INTERNAL_ERROR, "the generic CUDA convolution is not registered");
    }
};

// ---- cuda_conv_sm90_packed ----

// A strided 16-bit tensor, canonical N, C, (D = 1), H, W (filters K, C, T = 1, R, S).
struct Strided4 {
    int64_t s[5];
};

Strided4 strided(const ConvTensor& t) {
    Strided4 r;
    for (int i = 0; i < 5; ++i) r.s[i] = t.strides[i];
    return r;
}

// Dense channels-last copy [a][h][w][cp] of a strided tensor [a][c][h][w] (activations:
// a = n; filters: a = k, taps flipped when `flip`); channels c >= C and rows a >= A
// are zero. Copies raw 16-bit values.
__global__ void pack_kernel(const uint16_t* __restrict__ src, Strided4 st, int64_t a_real, int64_t c_real,
                            int64_t h, int64_t w, int64_t cp, bool flip, uint16_t* __restrict__ dst, int64_t total) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        int64_t q = i;
        const int64_t c = q % cp; q /= cp;
        const int64_t x = q % w; q /= w;
        const int64_t y = q % h;
        const int64_t a = q / h;
        uint16_t v = 0;
        if (c < c_real && a < a_real) {
            const int64_t sy = flip ? h - 1 - y : y, sx = flip ? w - 1 - x : x;
            v = src[a * st.s[0] + c * st.s[1] + sy * st.s[3] + sx * st.s[4]];
        }
        dst[i] = v;
    }
}

// The epilogue of the packed path, per output element.
struct Unpack {
    double alpha, beta;
    int dtype;
    // Fused bias + activation (forward only).
    bool epi;
    const void* z;
    Strided4 zt;
    double alpha2;
    const void* bias;
    int64_t bias_stride;
    int bias_dtype;
    bool relu, propagate_nan;
};

// dst[a][c][h][w] (strided, user memory) = blend(src[a][h][w][cp]) for a < A, c < C;
// the taps are flipped back for a filter of CUDNN_CONVOLUTION mode. W fastest.
__global__ void unpack_kernel(const uint16_t* __restrict__ src, int64_t cp, void* dst, Strided4 st, int64_t a_real,
                              int64_t c_real, int64_t h, int64_t w, bool flip, Unpack u, int64_t total) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        int64_t q = i;
        const int64_t x = q % w; q /= w;
        const int64_t y = q % h; q /= h;
        const int64_t c = q % c_real;
        const int64_t a = q / c_real;
        const int64_t sy = flip ? h - 1 - y : y, sx = flip ? w - 1 - x : x;
        const double acc = core::load_elem(src, ((a * h + sy) * w + sx) * cp + c, u.dtype);
        const int64_t off = a * st.s[0] + c * st.s[1] + y * st.s[3] + x * st.s[4];
        double v = u.alpha * acc;
        if (u.epi) {
            if (u.alpha2 != 0.0)
                v += u.alpha2 * core::load_elem(u.z, a * u.zt.s[0] + c * u.zt.s[1] + y * u.zt.s[3] + x * u.zt.s[4],
                                                u.dtype);
            v += core::load_elem(u.bias, c * u.bias_stride, u.bias_dtype);
            if (u.relu && !(v > 0.0 || (u.propagate_nan && v != v))) v = 0.0;
        } else if (u.beta != 0.0) {
            v += u.beta * core::load_elem(dst, off, u.dtype);
        }
        core::store_elem(dst, off, u.dtype, v);
    }
}

int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }
size_t align256(size_t b) { return (b + 255) / 256 * 256; }

// The packed problem: channels padded, every tensor dense channels-last in the workspace.
struct PackedLayout {
    int64_t cp = 0, kp = 0;
    size_t x_off = 0, w_off = 0, y_off = 0, core_off = 0, total = 0;
};

sm90::TcProblem packed_tc(const ConvProblem& p, const PackedLayout& l, void* ws) {
    sm90::TcProblem t = tc_problem(p);
    t.c = static_cast<int>(l.cp);
    t.k = static_cast<int>(l.kp);
    char* base = static_cast<char*>(ws);
    void* x = base ? base + l.x_off : nullptr;
    void* w = base ? base + l.w_off : nullptr;
    void* y = base ? base + l.y_off : nullptr;
    switch (p.kind) {
        case ConvKind::fwd: t.a = x; t.b = w; t.out = y; break;
        case ConvKind::bwd_data: t.a = y; t.b = w; t.out = x; break;
        case ConvKind::bwd_filter: t.a = y; t.b = x; t.out = w; break;
    }
    t.alpha = 1.0f;
    t.beta = 0.0f;
    t.workspace = base ? base + l.core_off : nullptr;
    return t;
}

StatusOr<PackedLayout> packed_layout(const ConvProblem& p) {
    PackedLayout l;
    l.cp = round8(p.c);
    l.kp = round8(p.k);
    const size_t x_bytes = static_cast<size_t>(p.n * p.in[1] * p.in[2] * l.cp) * 2;
    const size_t w_bytes = static_cast<size_t>(l.kp * p.filt[1] * p.filt[2] * l.cp) * 2;
    const size_t y_bytes = static_cast<size_t>(p.n * p.out[1] * p.out[2] * l.kp) * 2;
    l.x_off = 0;
    l.w_off = align256(x_bytes);
    l.y_off = l.w_off + align256(w_bytes);
    l.core_off = l.y_off + align256(y_bytes);
    size_t core = 0;
    ODNN_RETURN_IF_ERROR(
        sm90::dispatch(op_of(p.kind), type_of(p), packed_tc(p, l, nullptr), sm90::TcCall::workspace, &core));
    l.total = l.core_off + core;
    return l;
}

class CudaConvSm90Packed final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cuda_conv_sm90_packed"; }

    Status check(const ConvProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_common(p));
        const int64_t lim = int64_t{1} << 31;
        ODNN_REQUIRE_SUPPORTED(p.n * p.in[1] * p.in[2] * round8(p.c) < lim &&
                                   p.n * p.out[1] * p.out[2] * round8(p.k) < lim,
                               "padded tensors of 2^31 or more elements");
        auto l = packed_layout(p);
        if (!l.is_ok()) return l.status();
        size_t unused = 0;
        return sm90::dispatch(op_of(p.kind), type_of(p), packed_tc(p, l.value(), nullptr), sm90::TcCall::check,
                              &unused);
    }

    size_t workspace_size(const ConvProblem& p) const override {
        auto l = packed_layout(p);
        return l.is_ok() ? l.value().total : 0;
    }

    bool tensor_cores(const ConvProblem&) const override { return true; }

    Status execute(const core::Handle& h, const ConvProblem& p) const override {
        auto lo = packed_layout(p);
        if (!lo.is_ok()) return lo.status();
        const PackedLayout& l = lo.value();
        char* ws = static_cast<char*>(p.workspace);
        const cudaStream_t st = h.stream;
        const int64_t H = p.in[1], W = p.in[2], P = p.out[1], Q = p.out[2], R = p.filt[1], S = p.filt[2];
        auto pack = [&](const void* src, const ConvTensor& t, int64_t a, int64_t ap, int64_t c, int64_t cp,
                        int64_t hh, int64_t ww, bool flip, size_t off) -> Status {
            const int64_t total = ap * hh * ww * cp;
            pack_kernel<<<grid_for(total), 256, 0, st>>>(static_cast<const uint16_t*>(src), strided(t), a, c, hh, ww,
                                                         cp, flip, reinterpret_cast<uint16_t*>(ws + off), total);
            return core::cuda_check_launch("pack_kernel");
        };
        // Inputs in.
        if (p.kind != ConvKind::bwd_data) ODNN_RETURN_IF_ERROR(pack(p.x_data, p.x, p.n, p.n, p.c, l.cp, H, W, false, l.x_off));
        if (p.kind != ConvKind::bwd_filter)
            ODNN_RETURN_IF_ERROR(pack(p.w_data, p.w, p.k, l.kp, p.c, l.cp, R, S, p.flip, l.w_off));
        if (p.kind != ConvKind::fwd) ODNN_RETURN_IF_ERROR(pack(p.y_data, p.y, p.n, p.n, p.k, l.kp, P, Q, false, l.y_off));
        // The convolution, dense.
        sm90::TcProblem t = packed_tc(p, l, ws);
        t.stream = st;
        size_t unused = 0;
        ODNN_RETURN_IF_ERROR(sm90::dispatch(op_of(p.kind), type_of(p), t, sm90::TcCall::run, &unused));
        // The output out, blended.
        Unpack u{};
        u.alpha = p.alpha;
        u.beta = p.beta;
        u.dtype = p.x.dtype;
        if (p.epi.enabled) {
            u.epi = true;
            u.z = p.epi.z;
            u.zt = strided(p.epi.z_t);
            u.alpha2 = p.epi.alpha2;
            u.bias = p.epi.bias;
            u.bias_stride = p.epi.bias_t.strides[1];
            u.bias_dtype = p.epi.bias_t.dtype;
            u.relu = p.epi.relu;
            u.propagate_nan = p.epi.propagate_nan;
        }
        const uint16_t* src;
        void* dst;
        const ConvTensor* dt;
        int64_t a, c, cp, hh, ww;
        bool flip = false;
        switch (p.kind) {
            case ConvKind::fwd:
                src = reinterpret_cast<const uint16_t*>(ws + l.y_off); dst = p.y_data; dt = &p.y;
                a = p.n; c = p.k; cp = l.kp; hh = P; ww = Q;
                break;
            case ConvKind::bwd_data:
                src = reinterpret_cast<const uint16_t*>(ws + l.x_off); dst = p.x_data; dt = &p.x;
                a = p.n; c = p.c; cp = l.cp; hh = H; ww = W;
                break;
            default:
                src = reinterpret_cast<const uint16_t*>(ws + l.w_off); dst = p.w_data; dt = &p.w;
                a = p.k; c = p.c; cp = l.cp; hh = R; ww = S; flip = p.flip;
                break;
        }
        const int64_t total = a * c * hh * ww;
        unpack_kernel<<<grid_for(total), 256, 0, st>>>(src, cp, dst, strided(*dt), a, c, hh, ww, flip, u, total);
        return core::cuda_check_launch("unpack_kernel");
    }
};

}  // namespace

#ifndef ODNN_WITH_SM90_KERNELS
// Built without the sm_90a instances (no 90a in ODNN_CUDA_ARCHS, or no CUTLASS headers).
namespace sm90 {
#define ODNN_SM90_ABSENT(fn)                                                                              \
    core::Status fn(const TcProblem&, TcCall, size_t*) {                                                  \
        return core::Status(CUDNN_STATUS_NOT_SUPPORTED,                                                   \
                            "odnn was built without the sm_90a tensor-core kernels (CUTLASS, arch 90a)"); \
    }
ODNN_SM90_ABSENT(fprop_f16)
ODNN_SM90_ABSENT(fprop_bf16)
ODNN_SM90_ABSENT(dgrad_f16)
ODNN_SM90_ABSENT(dgrad_bf16)
ODNN_SM90_ABSENT(wgrad_f16)
ODNN_SM90_ABSENT(wgrad_bf16)
#undef ODNN_SM90_ABSENT
}  // namespace sm90
#endif

ODNN_REGISTER_IMPL(cuda, ConvProblem, CudaConvSm90, core::kPriorityFast);
// Below the direct kernels, above the generic ones.
ODNN_REGISTER_IMPL(cuda, ConvProblem, CudaConvSm90Packed, (core::kPriorityFast + core::kPriorityGeneric) / 2);

}  // namespace odnn::cuda
