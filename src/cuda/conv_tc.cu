// Tensor-core convolutions of the CUDA backend: the problems the implicit-GEMM kernels
// serve, routed to them; everything else is left to the generic kernels
// (conv_generic.cu), which rank below. Two kernel families (see sm80_family):
//   - compute capability 9.0: the Hopper kernels (conv_sm90.hpp: TMA, WGMMA), with the
//     Ampere-class ones (conv_sm80.hpp) for backward data with stride > 1 (one launch
//     over all phases) and for filter gradients split into reduction pieces (one launch);
//   - compute capability 8.x: the Ampere-class kernels (cp.async, mma.sync) for everything.
//
// Taken: 2-D (and 1-D) cross-correlations without groups, HALF or BFLOAT16 data with
// fp32 (or, for HALF, fp16) compute and a math type that allows tensor cores, FLOAT data
// (Ampere-class kernels: TF32 with any math type but FMA, as cuDNN; fp32 FMAs on the
// CUDA cores with FMA math where fma_kernels() allows), channels-last dense tensors
// (NHWC images, filters in the NHWC format), C and K multiples of 8, any padding /
// stride / dilation the kernels accept (backward data with stride > 1: see Plan; not
// with dilation for FLOAT), no fused epilogue; on a compute capability 8.x or 9.0
// device. Algorithms: forward IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM, backward data
// ALGO_0 and ALGO_1, backward filter ALGO_0, ALGO_1 and ALGO_3. Data pointers that are
// not 16-byte aligned (only known at run time) make the call run the generic kernel,
// which needs no workspace.
//
// cuda_conv_sm90_packed takes the rest of those problems whatever their layout: NCHW
// or strided tensors, filters in the NCHW format, C or K not multiples of 8,
// CUDNN_CONVOLUTION mode and the fused bias + activation epilogue. It packs the inputs
// into dense channels-last copies in the workspace (channels zero-padded to a multiple
// of 8, the filter flipped for CUDNN_CONVOLUTION), runs the kernel into a dense
// workspace output and writes that back through alpha / beta (or the epilogue).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/conv_problem.hpp"
#include "core/cuda_runtime.hpp"
#include "core/dtype.hpp"
#include "core/knob.hpp"
#include "core/elem_access.hpp"
#include "core/impl_registry.hpp"
#include "cuda/conv_sm80.hpp"
#include "cuda/conv_sm90.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

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

using core::knob_is;  // callers keep the value in a static: read once

// Which kernel family serves the current device: the Ampere-class one on compute
// capability 8.x, and on 9.0 when ODNN_CONV_TC=sm80 (a knob for tests and measurements:
// the Ampere-class kernels run on Hopper too).
bool sm80_family() {
    static const bool forced = knob_is("ODNN_CONV_TC", "sm80");
    const int cc = device_cc();
    return (cc >= 80 && cc < 90) || (forced && cc == 90);
}

// Dense channels-last: C innermost, then W, H, (D), N (the strides of unit dims do not
// matter: a 1 x 1 filter is dense in both filter formats).
bool dense_nhwc(const ConvTensor& t) {
    if (t.vect != 1) return false;
    int64_t expect = 1;
    for (const int i : {1, 4, 3, 2, 0}) {
        if (t.dims[i] != 1 && t.strides[i] != expect) return false;
        expect *= t.dims[i];
    }
    return true;
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

// FLOAT multiplies in TF32 where cuDNN would: any math type but FMA, unless
// NVIDIA_TF32_OVERRIDE=0 (cuDNN's switch, read the same way); else in fp32 FMAs.
bool tf32_allowed(const ConvProblem& p) {
    static const bool off = knob_is("NVIDIA_TF32_OVERRIDE", "0");
    return p.math != CUDNN_FMA_MATH && !off;
}

// FLOAT in fp32 FMAs runs on the Ampere-class CUDA-core kernels (sm80 *_f32; H200, N = 64,
// ResNet-50 NHWC: 1.43x NVIDIA's FMA kernels in geometric mean, 2026-12-02), or on the
// generic kernels with ODNN_CONV_FMA=generic (0.024x: kept as a measurement knob).
bool fma_kernels() {
    static const bool on = !knob_is("ODNN_CONV_FMA", "generic");
    return on;
}

sm90::TcType type_of(const ConvProblem& p) {
    if (p.x.dtype == CUDNN_DATA_FLOAT) return tf32_allowed(p) ? sm90::TcType::tf32 : sm90::TcType::f32;
    return p.x.dtype == CUDNN_DATA_HALF ? sm90::TcType::f16 : sm90::TcType::bf16;
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }
int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }
size_t align256(size_t b) { return (b + 255) / 256 * 256; }

// What both tensor-core implementations need, whatever the layout.
Status check_common(const ConvProblem& p) {
    ODNN_REQUIRE_SUPPORTED(algo_taken(p), "algo %s is not an implicit-GEMM algorithm",
                           core::conv_algo_name(p.kind, p.algo));
    const cudnnDataType_t dt = p.x.dtype;
    ODNN_REQUIRE_SUPPORTED(dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16 || dt == CUDNN_DATA_FLOAT,
                           "data type %s is not HALF, BFLOAT16 or FLOAT", core::dtype_name(dt));
    ODNN_REQUIRE_SUPPORTED(p.w.dtype == dt && p.y.dtype == dt, "mixed data types");
    ODNN_REQUIRE_SUPPORTED(p.x.vect == 1 && p.y.vect == 1 && p.w.vect == 1, "vectorised (VECT_C) tensors");
    ODNN_REQUIRE_SUPPORTED(p.compute == CUDNN_DATA_FLOAT || (p.compute == CUDNN_DATA_HALF && dt == CUDNN_DATA_HALF),
                           "compute type %s", core::dtype_name(p.compute));
    ODNN_REQUIRE_SUPPORTED(p.math != CUDNN_FMA_MATH || dt == CUDNN_DATA_FLOAT,
                           "CUDNN_FMA_MATH excludes tensor cores (HALF / BFLOAT16 have no FMA kernels here)");
    ODNN_REQUIRE_SUPPORTED(dt != CUDNN_DATA_FLOAT || tf32_allowed(p) || fma_kernels(),
                           "FLOAT without TF32 (FMA math or NVIDIA_TF32_OVERRIDE=0) with ODNN_CONV_FMA=generic");
    ODNN_REQUIRE_SUPPORTED(p.groups == 1, "groups = %lld", static_cast<long long>(p.groups));
    ODNN_REQUIRE_SUPPORTED(p.in[0] == 1 && p.filt[0] == 1 && p.out[0] == 1, "3-D problem");
    const int64_t lim = int64_t{1} << 31;
    ODNN_REQUIRE_SUPPORTED(p.n * p.in[1] * p.in[2] * round8(p.c) < lim && p.n * p.out[1] * p.out[2] * round8(p.k) < lim &&
                               round8(p.k) * p.filt[1] * p.filt[2] * round8(p.c) < lim,
                           "tensors of 2^31 or more elements");
    const int cc = device_cc();
#ifdef ODNN_SM80_AMPERE_CODE
    const bool ampere_built = true;
#else
    const bool ampere_built = false;
#endif
    ODNN_REQUIRE_SUPPORTED(cc == 90 || (cc >= 80 && cc < 90 && ampere_built),
                           "the tensor-core kernels need compute capability 9.0, or 8.x with sm_80 code built "
                           "(device has %d.%d)",
                           cc / 10, cc % 10);
    return Status::ok();
}

// The problem as the kernels see it: every tensor dense channels-last, channels padded
// to multiples of 8 where `packed`. The kernels read the caller's tensors directly when
// they are already so (never when packed); everything else lives in the workspace:
//   packed copies of the inputs, the output of fprop / dgrad when packed, and for
//   wgrad the fp32 partial filter gradients of `splits` batch slices (each `per` images,
//   run concurrently: a filter gradient has few output tiles and a long reduction).
//
// A backward data with stride > 1 runs as one strided kernel (conv_sm80.hpp) that writes
// dx's interleaved positions itself (see strided_kernel_serves), or else as stride-1
// phases: the dx rows h = a (mod sh) and
// columns w = b (mod sw) receive only the filter taps r = r0 (mod sh), s = s0 (mod sw),
// which makes each phase a stride-1 backward data on dy with a sub-filter (all gathered
// into the workspace in one launch) and asymmetric padding, computed into a dense
// workspace tensor of its own. One pass then writes every dx position from its phase's
// result (zero for phases without taps) through alpha / beta. (CUTLASS's TMA epilogue
// cannot write the interleaved positions directly: with output strides that do not
// collapse into one pixel stride, rows after a phase's first land in the wrong place.)
struct Phase {
    int64_t a = 0, b = 0;      // dx row / column residues
    int64_t r0 = 0, s0 = 0;    // first filter taps
    int64_t rn = 0, sn = 0;    // taps per dim
    int64_t hn = 0, wn = 0;    // dx rows / columns of the phase
    int lo[2] = {0, 0}, hi[2] = {0, 0};
    size_t filt_off = 0, out_off = 0;  // sub-filter, dense result
    bool empty() const { return rn == 0 || sn == 0; }
};
constexpr int kMaxPhases = 16;
constexpr int kMaxSlices = 32;  // concurrent batch slices of a filter gradient
constexpr int kMaxSplitK = 64;  // reduction pieces of a one-launch filter gradient

//
// With fewer than 8 input channels (a network's first layer: RGB), forward and filter
// gradient pack an explicit im2col matrix instead: N x P x Q rows of the C * R * S filter
// taps (padded: make_plan), which the kernels see as a 1 x 1 convolution with
// col_c channels, rather than padding C to 8 and wasting most of each TMA load.
struct Plan {
    bool packed = false;
    bool im2col = false;
    // wgrad: one launch writing the fp32 partial sums of `splits` reduction pieces (a
    // batched GEMM, or the Ampere-class split-K kernel: see core_call)
    bool gemm = false;
    bool strided_kernel = false;  // bwd_data: the strided kernel over every phase
    // Packed path: operands the kernels use in place (already dense channels-last with
    // unpadded channels, 16-byte aligned; decided at execution), and outputs they write in
    // place through alpha / beta. The workspace keeps room for their copies regardless.
    bool x_direct = false, w_direct = false, y_direct = false;
    int64_t col_c = 0;  // im2col: taps per row (C * R * S rounded up: make_plan)
    int64_t cp = 0, kp = 0;
    int splits = 1;
    int64_t per = 0;
    int phases = 0;  // strided backward data
    Phase phase[kMaxPhases];
    size_t x_off = 0, w_off = 0, y_off = 0, part_off = 0, core_off = 0, core_bytes = 0, total = 0;
};

// Elements of one image of the kernel's x operand, and of its filter.
int64_t x_image(const ConvProblem& p, const Plan& l) {
    return l.im2col ? p.out[1] * p.out[2] * l.col_c : p.in[1] * p.in[2] * l.cp;
}
int64_t filter_elems(const ConvProblem& p, const Plan& l) {
    return l.im2col ? l.kp * l.col_c : l.kp * p.filt[1] * p.filt[2] * l.cp;
}

sm90::TcProblem tc_base(const ConvProblem& p, const Plan& l) {
    sm90::TcProblem t;
    t.n = static_cast<int>(p.n);
    t.h = static_cast<int>(p.in[1]);
    t.w = static_cast<int>(p.in[2]);
    t.c = static_cast<int>(l.cp);
    t.k = static_cast<int>(l.kp);
    t.r = static_cast<int>(p.filt[1]);
    t.s = static_cast<int>(p.filt[2]);
    for (int i = 0; i < 2; ++i) {
        t.pad[i] = static_cast<int>(p.pad[i + 1]);
        t.stride[i] = static_cast<int>(p.stride[i + 1]);
        t.dil[i] = static_cast<int>(p.dil[i + 1]);
    }
    if (p.kind == ConvKind::bwd_filter && l.gemm) t.batch = l.splits;
    t.out_f32 = l.im2col && p.kind == ConvKind::bwd_data;  // col2im sums it again
    if (l.im2col) {  // a 1 x 1 convolution over the im2col matrix
        t.h = static_cast<int>(p.out[1]);
        t.w = static_cast<int>(p.out[2]);
        t.c = static_cast<int>(l.col_c);
        t.r = t.s = 1;
        for (int i = 0; i < 2; ++i) {
            t.pad[i] = 0;
            t.stride[i] = 1;
            t.dil[i] = 1;
        }
    }
    return t;
}

sm90::TcProblem tc_phase(const ConvProblem& p, const Plan& l, const Phase& f) {
    sm90::TcProblem t = tc_base(p, l);
    t.h = static_cast<int>(f.hn);
    t.w = static_cast<int>(f.wn);
    t.r = static_cast<int>(f.rn);
    t.s = static_cast<int>(f.sn);
    for (int i = 0; i < 2; ++i) {
        t.pad[i] = f.lo[i];
        t.pad_hi[i] = f.hi[i];
        t.stride[i] = 1;
        t.dil[i] = 1;
    }
    return t;
}

// How a filter gradient that is not a GEMM runs on Hopper (HALF / BFLOAT16):
//   split   one launch of the split sm90 kernel (conv_sm90_wgrad_split.cuh) (the default);
//   slices  concurrent batch slices of CUTLASS's sm90 kernel, a launch each
//           (ODNN_CONV_WGRAD=slices);
//   sm80    one split-K launch of the Ampere-class kernel (ODNN_CONV_WGRAD=sm80).
// Measured on the H200 (f16, N = 128, ms): sm80 / slices 64 x 56 x 56 3x3 0.231 / 0.239,
// 128 x 28 x 28 3x3 0.207 / 0.134, 128 x 56 x 56 3x3 stride 2 0.209 / 0.141 (2026-12-01);
// slices / split 0.264 / 0.073, 0.162 / 0.064, 0.177 / 0.067 (2026-12-02).
enum class WgradRoute { slices, split, sm80 };
WgradRoute wgrad_route() {
    static const WgradRoute r = knob_is("ODNN_CONV_WGRAD", "sm80")     ? WgradRoute::sm80
                                : knob_is("ODNN_CONV_WGRAD", "slices") ? WgradRoute::slices
                                                                       : WgradRoute::split;
    return r;
}

// A kernel problem that is a plain matrix product: 1 x 1 taps, no padding, stride 1 (true
// 1 x 1 layers, im2col matrices, the phases of strided 1 x 1 backward data).
bool gemm_shape(const sm90::TcProblem& t) {
    return t.r == 1 && t.s == 1 && t.pad[0] == 0 && t.pad[1] == 0 && t.pad_hi[0] <= 0 && t.pad_hi[1] <= 0 &&
           t.stride[0] == 1 && t.stride[1] == 1;
}

// Runs (or checks, or sizes) a kernel problem: on the Ampere-class kernels where they
// serve it (their family's device; strided backward data; filter gradients in reduction
// pieces that are not a GEMM), else as a GEMM where it is one, else as a Hopper
// implicit-GEMM convolution.
Status core_call(sm90::TcOp op, sm90::TcType ty, const sm90::TcProblem& t, sm90::TcCall call, size_t* bytes) {
    const bool strided = t.stride[0] > 1 || t.stride[1] > 1;
    const bool fp32 = ty == sm90::TcType::tf32 || ty == sm90::TcType::f32;
    const bool wgrad_conv = op == sm90::TcOp::wgrad && !gemm_shape(t);
    if (sm80_family() || fp32 || (op == sm90::TcOp::dgrad && strided) ||
        (wgrad_conv && wgrad_route() == WgradRoute::sm80))
        return sm80::dispatch(op, ty, t, call, bytes);
    if (wgrad_conv && wgrad_route() == WgradRoute::split) return sm90::dispatch_wgrad_split(ty, t, call, bytes);
    if (!gemm_shape(t)) return sm90::dispatch(op, ty, t, call, bytes);
    sm90::GemmProblem g;
    const int pix = t.n * t.h * t.w;  // < 2^31: check_common bounds every tensor
    switch (op) {
        case sm90::TcOp::fprop: g.m = pix; g.n = t.k; g.k = t.c; break;
        case sm90::TcOp::dgrad: g.m = pix; g.n = t.c; g.k = t.k; break;
        case sm90::TcOp::wgrad: g.m = t.k; g.n = t.c; g.k = pix / t.batch; break;  // t.batch divides t.n
    }
    g.batch = t.batch;
    g.out_f32 = t.out_f32;
    g.a = t.a;
    g.b = t.b;
    g.out = t.out;
    g.alpha = t.alpha;
    g.beta = t.beta;
    if (cudaGetDevice(&g.device) != cudaSuccess) {
        cudaGetLastError();
        g.device = 0;
    }
    g.sm_count = sm_count();
    g.workspace = t.workspace;
    g.stream = t.stream;
    return sm90::dispatch_gemm(op, ty, g, call, bytes);
}

// The phases of a strided backward data (see Plan).
Status make_phases(const ConvProblem& p, Plan* l) {
    const int64_t sh = p.stride[1], sw = p.stride[2];
    ODNN_REQUIRE_SUPPORTED(p.dil[1] == 1 && p.dil[2] == 1, "backward data with stride > 1 and dilation > 1");
    ODNN_REQUIRE_SUPPORTED(sh * sw <= kMaxPhases, "backward data with stride %lld x %lld",
                           static_cast<long long>(sh), static_cast<long long>(sw));
    // Per dim: taps, dx positions and padding of residue `a`.
    struct Dim {
        int64_t t0, tn, xn;
        int lo, hi;
        bool ok;
    };
    auto dim = [&](int d, int64_t a) {
        const int64_t s = p.stride[d], pad = p.pad[d], R = p.filt[d], X = p.in[d], Y = p.out[d];
        Dim r{};
        r.t0 = (a + pad) % s;
        r.tn = r.t0 < R ? (R - 1 - r.t0) / s + 1 : 0;
        r.xn = a < X ? (X - 1 - a) / s + 1 : 0;
        const int64_t lo = (a + pad - r.t0) / s;
        const int64_t hi = Y - 1 + r.tn - r.xn - lo;
        r.lo = static_cast<int>(lo);
        r.hi = static_cast<int>(hi);
        r.ok = r.tn == 0 || r.xn == 0 || (hi >= 0 && lo >= 0);
        return r;
    };
    l->phases = 0;
    for (int64_t a = 0; a < sh; ++a)
        for (int64_t b = 0; b < sw; ++b) {
            const Dim dh = dim(1, a), dw = dim(2, b);
            ODNN_REQUIRE_SUPPORTED(dh.ok && dw.ok, "a phase of this strided backward data needs negative padding");
            if (dh.xn == 0 || dw.xn == 0) continue;  // no dx positions
            Phase& f = l->phase[l->phases++];
            f.a = a;
            f.b = b;
            f.r0 = dh.t0;
            f.s0 = dw.t0;
            f.rn = dh.tn;
            f.sn = dw.tn;
            f.hn = dh.xn;
            f.wn = dw.xn;
            f.lo[0] = dh.lo;
            f.lo[1] = dw.lo;
            f.hi[0] = dh.hi;
            f.hi[1] = dw.hi;
        }
    return Status::ok();
}

bool strided_1x1(const ConvProblem& p) {
    return p.filt[1] == 1 && p.filt[2] == 1 && p.pad[1] == 0 && p.pad[2] == 0 && (p.stride[1] > 1 || p.stride[2] > 1);
}

// Whether a strided backward data runs as the one strided kernel rather than in phases:
// without dilation, on the Ampere-class family (FLOAT included) always (the kernel writes
// beta * dx where a phase has no taps), on Hopper where every phase has filter taps (a
// 1 x 1 stride-2 layer runs as one GEMM phase there). ODNN_CONV_STRIDED_DGRAD=phases
// keeps the phases on Hopper (a knob for tests and measurements).
bool strided_kernel_serves(const ConvProblem& p, bool f80) {
    static const bool phases = knob_is("ODNN_CONV_STRIDED_DGRAD", "phases");
    if (p.dil[1] != 1 || p.dil[2] != 1) return false;
    return f80 || (!phases && p.filt[1] >= p.stride[1] && p.filt[2] >= p.stride[2]);
}

// Reduction pieces of a split filter gradient with `tiles` output tiles and `k_blocks`
// k-blocks, on `resident` CTAs at once (non-persistent CTAs, so whole waves): the fewest
// that fill 85% of the waves they make, at least 32 k-blocks each (the pipeline's
// prologue and the partial sums stay small against the reduction).
int split_pieces(int64_t tiles, int64_t k_blocks, int64_t resident, int64_t most) {
    const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(most, k_blocks / 32));
    int64_t best = 1;
    double best_fill = 0;
    for (int64_t s = 1; s <= cap; ++s) {
        const int64_t ctas = tiles * s;
        const double fill = static_cast<double>(ctas) / static_cast<double>((ctas + resident - 1) / resident * resident);
        if (fill >= 0.85) return static_cast<int>(s);
        if (fill > best_fill + 1e-9) {
            best_fill = fill;
            best = s;
        }
    }
    return static_cast<int>(best);
}

StatusOr<Plan> make_plan(const ConvProblem& p, bool packed) {
    Plan l;
    l.packed = packed;
    l.cp = packed ? round8(p.c) : p.c;
    l.kp = packed ? round8(p.k) : p.k;
    const int64_t P = p.out[1], Q = p.out[2], R = p.filt[1], S = p.filt[2];
    // A strided 1 x 1 convolution without padding reads a subsampled x: its im2col matrix.
    // (Not for backward data on the Ampere-class kernels: it needs an fp32 output. Not for
    // FLOAT, which only those kernels take: the im2col kernels copy 16-bit values.)
    const bool fp32 = p.x.dtype == CUDNN_DATA_FLOAT;
    const bool f80 = sm80_family() || fp32;
    const size_t es = fp32 ? 4 : 2;  // element bytes
    l.im2col = packed && !fp32 && (p.kind == ConvKind::bwd_data ? p.c < 8 && !f80 : p.c < 8 || strided_1x1(p));
    // Forward: rows of more than 64 taps padded to whole 64-column k-blocks (measured on the
    // H200, RGB 7x7 stem: 147 taps as 192 columns made the GEMM 395 -> 225 us for 58 us more
    // im2col). The filter gradient's taps are the GEMM's N mode, not its reduction, and
    // backward data's fp32 gradient stays narrow: rounded to 8 only.
    const int64_t taps = p.c * R * S;
    l.col_c = taps > 64 && p.kind == ConvKind::fwd ? (taps + 63) / 64 * 64 : round8(taps);
    ODNN_REQUIRE_SUPPORTED(!l.im2col || p.n * P * Q * l.col_c < (int64_t{1} << 31),
                           "an im2col matrix of %lld x %lld elements (2^31 or more)",
                           static_cast<long long>(p.n * P * Q), static_cast<long long>(l.col_c));
    ODNN_REQUIRE_SUPPORTED(!l.im2col || l.col_c <= 3072, "im2col rows of %lld taps (more than 3072: its tap table)",
                           static_cast<long long>(l.col_c));
    // (backward data of an im2col plan: the fp32 gradient of the im2col matrix)
    const size_t x_bytes = static_cast<size_t>(p.n * x_image(p, l)) * (l.im2col && p.kind == ConvKind::bwd_data ? 4 : es);
    const size_t w_bytes = static_cast<size_t>(filter_elems(p, l)) * es;
    const size_t y_bytes = static_cast<size_t>(p.n * P * Q * l.kp) * es;
    size_t off = 0;
    auto take = [&](size_t bytes) {
        const size_t at = off;
        off += align256(bytes);
        return at;
    };
    if (packed) {
        l.x_off = take(x_bytes);
        l.w_off = p.kind != ConvKind::bwd_filter ? take(w_bytes) : 0;
        l.y_off = take(y_bytes);
    }
    sm90::TcProblem t = tc_base(p, l);
    const int64_t tile_m = gemm_shape(t) ? 128 : sm90::wgrad_tile_m(static_cast<int>(l.kp));
    const int64_t tiles = (l.kp + tile_m - 1) / tile_m * ((filter_elems(p, l) / l.kp + 127) / 128);
    if (p.kind == ConvKind::bwd_filter) {
        // The reduction over N * P * Q cut into `splits` pieces whose fp32 partial sums
        // unpack adds: in one launch (l.gemm), or as concurrent batch slices.
        const bool wgrad_conv = !gemm_shape(t);
        l.gemm = true;
        l.per = p.n;
        if (wgrad_conv && !f80 && wgrad_route() == WgradRoute::split) {
            // The split kernel: pieces that fill the SMs' waves (split_pieces). (CUTLASS
            // tiles the (C, S, R) columns channel-first: ceil(C / tile) x S x R tiles.)
            const int kp = static_cast<int>(l.kp);
            const int64_t tile_m = sm90::wgrad_split_tile_m(kp), tile_n = sm90::wgrad_split_tile_n(kp);
            const int64_t taps = filter_elems(p, l) / l.kp / l.cp;  // R * S
            const int64_t out_tiles = (l.kp + tile_m - 1) / tile_m * ((l.cp + tile_n - 1) / tile_n * taps);
            const int64_t k_blocks = (static_cast<int64_t>(t.n) * P * Q + 63) / 64;
            l.splits = split_pieces(out_tiles, k_blocks, sm_count() * sm90::wgrad_split_ctas_per_sm(kp), kMaxSplitK);
        } else if (wgrad_conv && (f80 || wgrad_route() == WgradRoute::sm80)) {
            // The Ampere-class split-K kernel: about two waves of its smaller tiles, each
            // piece at least 64 k-blocks of 32 output pixels long.
            const int64_t tiles80 = (l.kp + sm80::kWgradTileM - 1) / sm80::kWgradTileM *
                                    ((filter_elems(p, l) / l.kp + sm80::kWgradTileN - 1) / sm80::kWgradTileN);
            const int64_t blocks = static_cast<int64_t>(t.n) * P * Q / 32;
            const int64_t want = (2 * sm_count() + tiles80 - 1) / tiles80;
            l.splits = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({want, kMaxSplitK, blocks / 64})));
        } else if (!wgrad_conv) {
            // One batched GEMM: equal pieces (a divisor of N), about one wave of tiles.
            l.splits = 1;
            for (int64_t d = 1; d <= p.n; ++d)
                if (p.n % d == 0 && tiles * d <= sm_count()) l.splits = static_cast<int>(d);
            l.per = p.n / l.splits;
        } else {
            // Concurrent batch slices: each a launch of its own (6-15 us of host time), so few
            // of them: eight where that gives 64 or more tiles in flight (measured on the
            // H200: eight beat four and sixteen on 128 x 28 x 28, 9 tiles), sixteen below
            // (64 x 56 x 56, 5 tiles: eight slices keep 40 of 132 SMs busy).
            l.gemm = false;
            int64_t splits = (sm_count() + tiles - 1) / tiles;
            static const int64_t knob = [] {  // ODNN_CONV_WGRAD_MAX_SPLITS: a tuning knob for measurements
                const long v = core::knob_long("ODNN_CONV_WGRAD_MAX_SPLITS", 0);
                return v >= 1 && v <= kMaxSlices ? static_cast<int64_t>(v) : int64_t{0};
            }();
            const int64_t cap = knob ? knob : tiles * 8 >= 64 ? 8 : 16;
            splits = std::max<int64_t>(1, std::min<int64_t>({splits, p.n, cap}));
            l.per = (p.n + splits - 1) / splits;
            l.splits = static_cast<int>((p.n + l.per - 1) / l.per);
            t.n = static_cast<int>(l.per);
        }
        if (l.gemm) t.batch = l.splits;  // (tc_base sets it from now on)
        l.part_off = take(static_cast<size_t>(l.splits) * static_cast<size_t>(filter_elems(p, l)) * 4);
    }
    if (p.kind == ConvKind::bwd_data && !l.im2col && (p.stride[1] > 1 || p.stride[2] > 1) &&
        strided_kernel_serves(p, f80)) {
        l.strided_kernel = true;
        ODNN_RETURN_IF_ERROR(core_call(sm90::TcOp::dgrad, type_of(p), t, sm90::TcCall::workspace, &l.core_bytes));
    } else if (p.kind == ConvKind::bwd_data && !l.im2col && (p.stride[1] > 1 || p.stride[2] > 1)) {
        // (the phase kernels copy 16-bit values)
        ODNN_REQUIRE_SUPPORTED(!fp32, "FLOAT backward data with stride > 1 and dilation > 1");
        ODNN_RETURN_IF_ERROR(make_phases(p, &l));
        for (int i = 0; i < l.phases; ++i) {
            Phase& f = l.phase[i];
            if (f.empty()) continue;
            f.filt_off = take(static_cast<size_t>(l.kp * f.rn * f.sn * l.cp) * 2);
            f.out_off = take(static_cast<size_t>(p.n * f.hn * f.wn * l.cp) * 2);
            size_t bytes = 0;
            ODNN_RETURN_IF_ERROR(
                core_call(sm90::TcOp::dgrad, type_of(p), tc_phase(p, l, f), sm90::TcCall::workspace, &bytes));
            l.core_bytes = std::max(l.core_bytes, bytes);
        }
    } else {
        ODNN_RETURN_IF_ERROR(core_call(op_of(p.kind), type_of(p), t, sm90::TcCall::workspace, &l.core_bytes));
    }
    l.core_off = off;
    // (one kernel workspace per concurrent batch slice; the batched GEMM is one launch)
    l.total = off + static_cast<size_t>(l.gemm ? 1 : l.splits) * align256(l.core_bytes);
    if (!packed && p.kind == ConvKind::fwd) l.total = l.core_bytes;  // the kernel alone
    if (!packed && p.kind == ConvKind::bwd_data && l.phases == 0) l.total = l.core_bytes;
    return l;
}

// Which operands of the packed path need no copy (see Plan).
void decide_direct(const ConvProblem& p, Plan* l) {
    const bool unit = p.filt[1] == 1 && p.filt[2] == 1;
    l->x_direct = !l->im2col && l->cp == p.c && dense_nhwc(p.x) && aligned16(p.x_data);
    l->w_direct = l->cp == p.c && l->kp == p.k && !p.flip && dense_nhwc(p.w) && aligned16(p.w_data) &&
                  (!l->im2col || (unit && l->col_c == p.c));
    l->y_direct = l->kp == p.k && dense_nhwc(p.y) && aligned16(p.y_data);
    if (p.kind == ConvKind::fwd && p.epi.enabled) l->y_direct = false;  // written through the epilogue
}

// ---- packing kernels ----

// A strided tensor, canonical N, C, (D = 1), H, W (filters K, C, T = 1, R, S).
struct Strided4 {
    int64_t s[5];
};

Strided4 strided(const ConvTensor& t) {
    Strided4 r;
    for (int i = 0; i < 5; ++i) r.s[i] = t.strides[i];
    return r;
}

// Dense channels-last copy [a][h][w][cp] of a strided tensor [a][c][h][w] (activations:
// a = n; filters: a = k, taps flipped when `flip`); channels c >= C and rows a >= A are
// zero. One thread per element: any strides.
// Copies raw 16- or 32-bit values (T: uint16_t or uint32_t).
template <class T>
__global__ void pack_kernel(const T* __restrict__ src, Strided4 st, int64_t a_real, int64_t c_real, int64_t h,
                            int64_t w, int64_t cp, bool flip, T* __restrict__ dst, int64_t total) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        int64_t q = i;
        const int64_t c = q % cp; q /= cp;
        const int64_t x = q % w; q /= w;
        const int64_t y = q % h;
        const int64_t a = q / h;
        T v = 0;
        if (c < c_real && a < a_real) {
            const int64_t sy = flip ? h - 1 - y : y, sx = flip ? w - 1 - x : x;
            v = src[a * st.s[0] + c * st.s[1] + sy * st.s[3] + sx * st.s[4]];
        }
        dst[i] = v;
    }
}

// The same copy where each channel's H x W plane is contiguous (NCHW and its channel
// slices) and nothing is flipped: a 32 x 32 tile (channels x pixels) per block through
// shared memory, so that reads run along the plane and writes along the channels (one
// thread per element gathers across planes: a 32-byte sector per 2- or 4-byte value).
// Grid: pixel tiles, channel tiles, rows a.
template <class T>
__global__ void pack_planes_kernel(const T* __restrict__ src, int64_t s_a, int64_t s_c, int64_t a_real,
                                   int64_t c_real, int64_t hw, int64_t cp, T* __restrict__ dst) {
    __shared__ T tile[32][33];
    const int64_t a = blockIdx.z, p0 = static_cast<int64_t>(blockIdx.x) * 32, c0 = static_cast<int64_t>(blockIdx.y) * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int j = ty; j < 32; j += 8) {
        const int64_t c = c0 + j, px = p0 + tx;
        T v = 0;
        if (c < c_real && a < a_real && px < hw) v = src[a * s_a + c * s_c + px];
        tile[j][tx] = v;
    }
    __syncthreads();
    for (int j = ty; j < 32; j += 8) {
        const int64_t px = p0 + j, c = c0 + tx;
        if (px < hw && c < cp) dst[(a * hw + px) * cp + c] = tile[tx][j];
    }
}

// The im2col matrix [n][p][q][j] of a strided activation [n][c][h][w]: tap j = (r, s, c)
// with c fastest, zero outside the image and for j >= C * R * S.
struct Im2colGeo {
    int64_t c, h, w, p, q, r, s;
    int pad[2], stride[2], dil[2];
};

// One thread per 8 consecutive columns of a row (one 16-byte store); 32-bit index math
// (make_plan keeps the matrix under 2^31 elements).
// Vec: C is a multiple of 8, x channel-contiguous and 16-byte aligned: the 8 columns are
// one 16-byte load of x. Otherwise each column is gathered, its tap offsets read from a
// per-block table (column -> r * dil, s * dil, channel offset) in shared memory, stored
// [k][chunk] for column chunk * 8 + k so that a warp's reads of one k are consecutive
// (stored by column, every thread's k-th read would fall in the same banks).
template <bool Vec>
__global__ void im2col_pack_kernel(const uint16_t* __restrict__ x, Strided4 st, Im2colGeo g, int col_c,
                                   uint16_t* __restrict__ out, int chunks) {
    extern __shared__ int4 tab[];  // !Vec: col_c entries {dh, dw, channel offset, valid}, [k][chunk]
    const int cv = col_c / 8, c = static_cast<int>(g.c), taps = c * static_cast<int>(g.r * g.s);
    const int s_w = static_cast<int>(g.s), gq = static_cast<int>(g.q), gp = static_cast<int>(g.p);
    const int h = static_cast<int>(g.h), w = static_cast<int>(g.w);
    if (!Vec) {
        for (int j = threadIdx.x; j < col_c; j += blockDim.x) {
            const int t = j / c, cc = j - t * c, r = t / s_w;
            tab[(j % 8) * cv + j / 8] =
                make_int4(r * g.dil[0], (t - r * s_w) * g.dil[1], static_cast<int>(cc * st.s[1]), j < taps);
        }
        __syncthreads();
    }
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < chunks; i += gridDim.x * blockDim.x) {
        const int chunk = i % cv, j0 = chunk * 8;
        int row = i / cv;
        const int oq = row % gq; row /= gq;
        const int op = row % gp;
        const int n = row / gp;
        const int h0 = op * g.stride[0] - g.pad[0], w0 = oq * g.stride[1] - g.pad[1];
        const uint16_t* xn = x + n * st.s[0];
        uint4 v = make_uint4(0, 0, 0, 0);
        if (Vec) {
            if (j0 < taps) {
                const int t = j0 / c, cc = j0 - t * c, r = t / s_w;
                const int ih = h0 + r * g.dil[0], iw = w0 + (t - r * s_w) * g.dil[1];
                if (ih >= 0 && ih < h && iw >= 0 && iw < w)
                    v = __ldg(reinterpret_cast<const uint4*>(xn + cc + ih * st.s[3] + iw * st.s[4]));
            }
        } else {
            uint16_t* e = reinterpret_cast<uint16_t*>(&v);
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                const int4 tk = tab[k * cv + chunk];
                const int ih = h0 + tk.x, iw = w0 + tk.y;
                if (tk.w && ih >= 0 && ih < h && iw >= 0 && iw < w) e[k] = __ldg(xn + tk.z + ih * st.s[3] + iw * st.s[4]);
            }
        }
        reinterpret_cast<uint4*>(out)[i] = v;
    }
}

// The gathering case with small images: one block per output row (n, op) stages the R
// input rows it reads in shared memory, each as `len` 16-bit values: `shift` zeros (so
// that x's row lands 16-byte aligned), the left padding (zeros), the W x C row, zeros to
// the end (rows outside the image all zeros). The entry (r, s, c) of output column oq is
// then row r's value at shift + (oq * stride + s * dil) * C + c, no bounds test. Loads:
// 16-byte vectors where x's rows are dense channels-last and aligned (`Vec`), else one
// value per thread in the order of x's smaller stride. Each thread writes 16-byte chunks
// of the row's Q x col_c matrix, starting from its chunk's first (r, s, c) (a table) and
// stepping. Shared memory: the table (cv int4), then R * len values.
struct RowStage {
    int shift = 0, len = 0;
};
RowStage row_stage(const Im2colGeo& g) {
    const int64_t lead = g.pad[1] * g.c;
    RowStage rs;
    rs.shift = static_cast<int>(round8(lead) - lead);
    const int64_t span = ((g.q - 1) * g.stride[1] + (g.s - 1) * g.dil[1] + 1) * g.c;  // padded columns read
    rs.len = static_cast<int>(round8(rs.shift + std::max(span, lead + g.w * g.c)));
    return rs;
}

template <bool Vec>
__global__ void im2col_rows_kernel(const uint16_t* __restrict__ x, Strided4 st, Im2colGeo g, int col_c, RowStage rs,
                                   uint16_t* __restrict__ out) {
    extern __shared__ int4 smem[];
    const int cv = col_c / 8, C = static_cast<int>(g.c), R = static_cast<int>(g.r), S = static_cast<int>(g.s);
    const int W = static_cast<int>(g.w), H = static_cast<int>(g.h), Q = static_cast<int>(g.q);
    const int P = static_cast<int>(g.p);
    int4* tab = smem;
    uint16_t* rows = reinterpret_cast<uint16_t*>(smem + cv);
    for (int ch = threadIdx.x; ch < cv; ch += blockDim.x) {
        const int t = ch * 8 / C, r = t / S;
        tab[ch] = make_int4(r, t - r * S, ch * 8 - t * C, 0);
    }
    const int n = blockIdx.x / P, op = blockIdx.x % P;
    const uint16_t* xn = x + n * st.s[0];
    const int data = rs.shift + g.pad[1] * C, row_elems = W * C;  // where x's row starts; its length
    auto row_in = [&](int r) {
        const int ih = op * g.stride[0] - g.pad[0] + r * g.dil[0];
        return ih >= 0 && ih < H ? ih : -1;
    };
    const int pads = rs.len - row_elems;  // zeros around each row's data
    for (int e = threadIdx.x; e < R * pads; e += blockDim.x) {
        const int r = e / pads, u = e - r * pads;
        rows[r * rs.len + (u < data ? u : u + row_elems)] = 0;
    }
    if (Vec) {  // (rows outside the image: zeros)
        const int vr = row_elems / 8;
        for (int e = threadIdx.x; e < R * vr; e += blockDim.x) {
            const int r = e / vr, v = e - r * vr, ih = row_in(r);
            reinterpret_cast<uint4*>(rows + r * rs.len + data)[v] =
                ih >= 0 ? __ldg(reinterpret_cast<const uint4*>(xn + ih * st.s[3]) + v) : make_uint4(0, 0, 0, 0);
        }
    } else {
        const bool c_inner = st.s[1] <= st.s[4];
        for (int e = threadIdx.x; e < R * row_elems; e += blockDim.x) {
            const int r = e / row_elems, rem = e - r * row_elems;
            const int iw = c_inner ? rem / C : rem % W, c = c_inner ? rem % C : rem / W;
            const int ih = row_in(r);
            rows[r * rs.len + data + iw * C + c] =
                ih >= 0 ? __ldg(xn + c * st.s[1] + ih * st.s[3] + iw * st.s[4]) : uint16_t{0};
        }
    }
    __syncthreads();
    const int taps = C * R * S, dil_c = g.dil[1] * C;
    uint4* dst = reinterpret_cast<uint4*>(out) + static_cast<int64_t>(blockIdx.x) * Q * cv;
    // (oq, chunk) of element i, stepped by blockDim.x without dividing
    const int dq = blockDim.x / cv, dc = blockDim.x - dq * cv;
    int oq = threadIdx.x / cv, chunk = threadIdx.x - oq * cv;
    for (int i = threadIdx.x; i < Q * cv; i += blockDim.x) {
        const int4 t0 = tab[chunk];
        int r = t0.x, s = t0.y, c = t0.z;
        const uint16_t* base = rows + rs.shift + oq * g.stride[1] * C;
        uint4 v;
        uint16_t* e = reinterpret_cast<uint16_t*>(&v);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            e[k] = chunk * 8 + k < taps ? base[r * rs.len + s * dil_c + c] : uint16_t{0};
            if (++c == C) {
                c = 0;
                if (++s == S) {
                    s = 0;
                    ++r;
                }
            }
        }
        dst[i] = v;
        oq += dq;
        chunk += dc;
        if (chunk >= cv) {
            chunk -= cv;
            ++oq;
        }
    }
}

size_t im2col_rows_smem(const Im2colGeo& g, int64_t col_c) {
    return static_cast<size_t>(col_c / 8) * sizeof(int4) + static_cast<size_t>(g.r * row_stage(g).len) * 2;
}

Im2colGeo im2col_geo(const ConvProblem& p) {
    return Im2colGeo{p.c,
                     p.in[1],
                     p.in[2],
                     p.out[1],
                     p.out[2],
                     p.filt[1],
                     p.filt[2],
                     {static_cast<int>(p.pad[1]), static_cast<int>(p.pad[2])},
                     {static_cast<int>(p.stride[1]), static_cast<int>(p.stride[2])},
                     {static_cast<int>(p.dil[1]), static_cast<int>(p.dil[2])}};
}

Status im2col(const void* x, const ConvTensor& xt, const Im2colGeo& g, int64_t col_c, int64_t n, uint16_t* out,
              cudaStream_t st) {
    const int chunks = static_cast<int>(n * g.p * g.q * (col_c / 8));
    const Strided4 s = strided(xt);
    const bool vec = g.c % 8 == 0 && s.s[1] == 1 && s.s[0] % 8 == 0 && s.s[3] % 8 == 0 && s.s[4] % 8 == 0 &&
                     reinterpret_cast<uintptr_t>(x) % 16 == 0;
    if (vec)
        im2col_pack_kernel<true><<<grid_for(chunks), 256, 0, st>>>(static_cast<const uint16_t*>(x), s, g,
                                                                   static_cast<int>(col_c), out, chunks);
    else if (im2col_rows_smem(g, col_c) <= 40 * 1024 && n * g.p < (int64_t{1} << 31)) {
        const unsigned blocks = static_cast<unsigned>(n * g.p);
        const size_t smem = im2col_rows_smem(g, col_c);
        const auto* xs = static_cast<const uint16_t*>(x);
        // Rows of x dense channels-last, 16-byte aligned: vector loads.
        if (s.s[1] == 1 && s.s[4] == g.c && (g.w * g.c) % 8 == 0 && s.s[3] % 8 == 0 && s.s[0] % 8 == 0 &&
            reinterpret_cast<uintptr_t>(x) % 16 == 0)
            im2col_rows_kernel<true><<<blocks, 256, smem, st>>>(xs, s, g, static_cast<int>(col_c), row_stage(g), out);
        else
            im2col_rows_kernel<false><<<blocks, 256, smem, st>>>(xs, s, g, static_cast<int>(col_c), row_stage(g), out);
    } else
        im2col_pack_kernel<false><<<grid_for(chunks), 256, col_c * sizeof(int4), st>>>(
            static_cast<const uint16_t*>(x), s, g, static_cast<int>(col_c), out, chunks);
    return core::cuda_check_launch(vec ? "im2col_pack_kernel<vec>" : "im2col gather kernel");
}

// Backward data of a small-channel layer from the fp32 gradient of its im2col matrix:
// dx[n][c][h][w] = alpha * (sum of dcol[n][p][q][(r, s, c)] over the taps that read x at
// (h, w)) + beta * dx, one thread per dx element, gathering (no atomics: deterministic).
// With dilation 1 the taps reaching row y are r = (y + pad) % sh, then every sh-th: stepped
// directly rather than tested.
template <class T>
__global__ void col2im_kernel(const float* __restrict__ dcol, Im2colGeo g, int col_c, T* dx, Strided4 st, float alpha,
                              float beta, int total) {
    const int c_n = static_cast<int>(g.c), w_n = static_cast<int>(g.w), h_n = static_cast<int>(g.h);
    const int R = static_cast<int>(g.r), S = static_cast<int>(g.s), P = static_cast<int>(g.p),
              Q = static_cast<int>(g.q);
    const bool unit = g.dil[0] == 1 && g.dil[1] == 1;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int q = i;
        const int c = q % c_n; q /= c_n;
        const int x = q % w_n; q /= w_n;
        const int y = q % h_n;
        const int n = q / h_n;
        const int yp = y + g.pad[0], xp = x + g.pad[1];
        const int r0 = unit ? yp % g.stride[0] : 0, rs = unit ? g.stride[0] : 1;
        const int s0 = unit ? xp % g.stride[1] : 0, ss = unit ? g.stride[1] : 1;
        const float* base = dcol + static_cast<int64_t>(n) * P * Q * col_c + c;
        float acc = 0.0f;
        for (int r = r0; r < R; r += rs) {
            const int th = yp - r * g.dil[0];
            if (th < 0) break;
            if (th % g.stride[0] != 0 || th / g.stride[0] >= P) continue;
            const int op = th / g.stride[0];
            for (int sx = s0; sx < S; sx += ss) {
                const int tw = xp - sx * g.dil[1];
                if (tw < 0) break;
                if (tw % g.stride[1] != 0 || tw / g.stride[1] >= Q) continue;
                acc += __ldg(base + static_cast<int64_t>(op * Q + tw / g.stride[1]) * col_c + (r * S + sx) * c_n);
            }
        }
        T* o = dx + n * st.s[0] + c * st.s[1] + y * st.s[3] + x * st.s[4];
        float v = alpha * acc;
        if (beta != 0.0f) v += beta * Io<T>::in(*o);
        *o = Io<T>::out(v);
    }
}

// A strided filter [k][c][r][s] as the rows [k][j] the im2col matrix multiplies (taps
// flipped for CUDNN_CONVOLUTION), zero for k >= K and j >= C * R * S.
__global__ void pack_filter_cols_kernel(const uint16_t* __restrict__ w, Strided4 st, int64_t K, int64_t C, int64_t R,
                                        int64_t S, bool flip, int64_t col_c, uint16_t* __restrict__ out,
                                        int64_t total) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        const int64_t j = i % col_c, k = i / col_c;
        uint16_t v = 0;
        if (k < K && j < C * R * S) {
            const int64_t c = j % C, t = j / C;
            const int64_t r = flip ? R - 1 - t / S : t / S, s = flip ? S - 1 - t % S : t % S;
            v = w[k * st.s[0] + c * st.s[1] + r * st.s[3] + s * st.s[4]];
        }
        out[i] = v;
    }
}

// Where each phase's sub-filter goes (see Phase): the phase of filter taps with residues
// (r % sh, s % sw) (-1: a phase without dx positions), its taps and its offset in the
// workspace (elements).
struct PhaseTaps {
    int8_t of[kMaxPhases];
    int rn[kMaxPhases], sn[kMaxPhases];
    int64_t off[kMaxPhases];
};

// The sub-filters of all phases from a dense K, R, S, C filter in one launch: blockIdx.y is
// the tap r * S + s, which belongs to exactly one phase; each becomes a dense K, rn, sn,
// C sub-filter. Raw 16-bit copies.
__global__ void gather_phase_taps_kernel(const uint16_t* __restrict__ w, int R, int S, int C, int K, int sh, int sw,
                                         PhaseTaps pt, uint16_t* __restrict__ ws) {
    const int t = blockIdx.y, r = t / S, s = t - r * S;
    const int f = pt.of[(r % sh) * sw + s % sw];
    if (f < 0) return;
    const int j = r / sh, l = s / sw, rn = pt.rn[f], sn = pt.sn[f];
    uint16_t* out = ws + pt.off[f];
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < static_cast<int64_t>(K) * C;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t k = i / C, c = i - k * C;
        out[((k * rn + j) * sn + l) * C + c] = w[((k * R + r) * S + s) * C + c];
    }
}

// Where each dx residue (h % sh, w % sw) finds its phase's dense result [n][hn][wn][cs]
// (element offset in the workspace; -1: a phase without taps, whose result is zero).
struct PhaseResults {
    int64_t off[kMaxPhases];
    int hn[kMaxPhases], wn[kMaxPhases];
};

// Every dx position from its phase's result through alpha / beta, in one pass: dx dense
// [n][h][w][cs] (channels c <= cs, both multiples of 8, 16-byte aligned), eight channels
// per thread, one dx row per blockIdx.y step (N * H < 2^31: check_common bounds dx).
template <class T>
__global__ void phase_interleave_kernel(const T* __restrict__ ws, PhaseResults pr, T* dx, int rows, int H, int W,
                                        int cs, int c, int sh, int sw, float alpha, float beta) {
    const int cv = c / 8, per_row = W * cv;
    for (int row = blockIdx.y; row < rows; row += gridDim.y) {
        const int n = row / H, y = row - n * H, a = y % sh, i = y / sh;
        for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < per_row; t += gridDim.x * blockDim.x) {
            const int x = t / cv, ch = (t - x * cv) * 8, ph = a * sw + x % sw;
            T* out = dx + (static_cast<int64_t>(row) * W + x) * cs + ch;
            uint4 v = make_uint4(0, 0, 0, 0), o = make_uint4(0, 0, 0, 0);
            const int64_t off = pr.off[ph];
            if (off >= 0)
                v = *reinterpret_cast<const uint4*>(
                    ws + off + ((static_cast<int64_t>(n) * pr.hn[ph] + i) * pr.wn[ph] + x / sw) * cs + ch);
            if (beta != 0.0f) o = *reinterpret_cast<const uint4*>(out);
            if (alpha != 1.0f || beta != 0.0f) {
                T* v8 = reinterpret_cast<T*>(&v);
                const T* o8 = reinterpret_cast<const T*>(&o);
#pragma unroll
                for (int k = 0; k < 8; ++k) {
                    float f = alpha * Io<T>::in(v8[k]);
                    if (beta != 0.0f) f += beta * Io<T>::in(o8[k]);
                    v8[k] = Io<T>::out(f);
                }
            }
            *reinterpret_cast<uint4*>(out) = v;
        }
    }
}

// How the output is written back.
struct Unpack {
    double alpha, beta;
    int dtype;       // the caller's output type
    int src_dtype;   // the workspace result's type (FLOAT for wgrad partials)
    int splits;      // slices summed (wgrad)
    int64_t slice;   // elements per slice
    int64_t tap_c;   // im2col filter rows [k][(r, s, c)]: C; 0 for [k][r][s][cp]
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

// dst[a][c][h][w] (strided, caller's memory) = blend(sum over slices of src[a][h][w][cp])
// for a < A, c < C; filter taps flipped back for CUDNN_CONVOLUTION. W fastest.
__global__ void unpack_kernel(const void* __restrict__ src, int64_t cp, void* dst, Strided4 st, int64_t a_real,
                              int64_t c_real, int64_t h, int64_t w, bool flip, Unpack u, int64_t total) {
    ODNN_GRID_STRIDE_LOOP(i, total) {
        int64_t q = i;
        const int64_t x = q % w; q /= w;
        const int64_t y = q % h; q /= h;
        const int64_t c = q % c_real;
        const int64_t a = q / c_real;
        const int64_t sy = flip ? h - 1 - y : y, sx = flip ? w - 1 - x : x;
        const int64_t at = u.tap_c ? a * cp + (sy * w + sx) * u.tap_c + c : ((a * h + sy) * w + sx) * cp + c;
        double acc = 0.0;
        for (int s = 0; s < u.splits; ++s) acc += core::load_elem(src, s * u.slice + at, u.src_dtype);
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

// unpack_kernel's plain case (one result of the output's type, no epilogue, nothing
// flipped) where each channel's H x W plane of dst is contiguous (NCHW): transposed
// through a 32 x 32 tile in shared memory as pack_planes_kernel, so that both the
// workspace reads and the caller's writes are coalesced. dst = alpha * src + beta * dst
// (dst not read when beta = 0).
template <class T>
__global__ void unpack_planes_kernel(const T* __restrict__ src, int64_t cp, T* __restrict__ dst, int64_t s_a,
                                     int64_t s_c, int64_t c_real, int64_t hw, float alpha, float beta) {
    using C = typename Io<T>::C;
    __shared__ C tile[32][33];
    const int64_t a = blockIdx.z, p0 = static_cast<int64_t>(blockIdx.x) * 32, c0 = static_cast<int64_t>(blockIdx.y) * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int j = ty; j < 32; j += 8) {
        const int64_t px = p0 + j, c = c0 + tx;
        tile[j][tx] = px < hw && c < c_real ? Io<T>::in(src[(a * hw + px) * cp + c]) : C(0);
    }
    __syncthreads();
    for (int j = ty; j < 32; j += 8) {
        const int64_t c = c0 + j, px = p0 + tx;
        if (c >= c_real || px >= hw) continue;
        const int64_t off = a * s_a + c * s_c + px;
        C v = static_cast<C>(alpha) * tile[tx][j];
        if (beta != 0.0f) v += static_cast<C>(beta) * Io<T>::in(dst[off]);
        dst[off] = Io<T>::out(v);
    }
}

// Streams the batch slices of a filter gradient run on, forked from and joined back to
// the caller's stream. Created once per device and kept.
class SliceStreams {
public:
    static constexpr int kMax = kMaxSlices;
    Status fork(cudaStream_t origin, int n, cudaStream_t* out) {
        std::lock_guard<std::mutex> lock(mu_);
        int dev = 0;
        ODNN_REQUIRE(cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < 64, CUDNN_STATUS_EXECUTION_FAILED_CUDART,
                     "cannot query the current device");
        Pool& pool = pools_[dev];
        if (!pool.ready) {
            for (int i = 0; i < kMax; ++i) {
                ODNN_REQUIRE(cudaStreamCreateWithFlags(&pool.streams[i], cudaStreamNonBlocking) == cudaSuccess &&
                                 cudaEventCreateWithFlags(&pool.done[i], cudaEventDisableTiming) == cudaSuccess,
                             CUDNN_STATUS_EXECUTION_FAILED_CUDART, "cannot create the batch-slice streams");
            }
            ODNN_REQUIRE(cudaEventCreateWithFlags(&pool.start, cudaEventDisableTiming) == cudaSuccess,
                         CUDNN_STATUS_EXECUTION_FAILED_CUDART, "cannot create the batch-slice events");
            pool.ready = true;
        }
        ODNN_REQUIRE(cudaEventRecord(pool.start, origin) == cudaSuccess, CUDNN_STATUS_EXECUTION_FAILED_CUDART,
                     "cudaEventRecord failed");
        for (int i = 0; i < n; ++i) {
            ODNN_REQUIRE(cudaStreamWaitEvent(pool.streams[i], pool.start, 0) == cudaSuccess,
                         CUDNN_STATUS_EXECUTION_FAILED_CUDART, "cudaStreamWaitEvent failed");
            out[i] = pool.streams[i];
        }
        current_ = &pool;
        return Status::ok();
    }
    Status join(cudaStream_t origin, int n) {
        Pool& pool = *current_;
        for (int i = 0; i < n; ++i) {
            ODNN_REQUIRE(cudaEventRecord(pool.done[i], pool.streams[i]) == cudaSuccess &&
                             cudaStreamWaitEvent(origin, pool.done[i], 0) == cudaSuccess,
                         CUDNN_STATUS_EXECUTION_FAILED_CUDART, "joining the batch-slice streams failed");
        }
        return Status::ok();
    }
    std::mutex& mutex() { return use_; }

private:
    struct Pool {
        bool ready = false;
        cudaStream_t streams[kMax] = {};
        cudaEvent_t done[kMax] = {};
        cudaEvent_t start = nullptr;
    };
    std::mutex mu_, use_;
    Pool pools_[64];
    Pool* current_ = nullptr;
};

SliceStreams& slice_streams() {
    static SliceStreams* s = new SliceStreams();
    return *s;
}

// Both tensor-core implementations: `packed` says whether the inputs are repacked.
class CudaConvSm90 : public core::Impl<ConvProblem> {
public:
    explicit CudaConvSm90(bool packed) : packed_(packed) {}
    const char* name() const override { return packed_ ? "cuda_conv_sm90_packed" : "cuda_conv_sm90"; }

    Status check(const ConvProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_common(p));
        if (!packed_) {
            ODNN_REQUIRE_SUPPORTED(!p.flip, "CUDNN_CONVOLUTION mode (flipped filter)");
            ODNN_REQUIRE_SUPPORTED(!p.epi.enabled, "fused bias and activation");
            ODNN_REQUIRE_SUPPORTED(p.c % 8 == 0 && p.k % 8 == 0, "C = %lld and K = %lld must be multiples of 8",
                                   static_cast<long long>(p.c), static_cast<long long>(p.k));
            ODNN_REQUIRE_SUPPORTED(dense_nhwc(p.x) && dense_nhwc(p.y), "x and y are not dense NHWC");
            ODNN_REQUIRE_SUPPORTED(dense_nhwc(p.w), "the filter is not dense in the NHWC format");
            ODNN_REQUIRE_SUPPORTED(p.kind == ConvKind::bwd_data || !strided_1x1(p) || p.x.dtype == CUDNN_DATA_FLOAT,
                                   "a strided 1 x 1 convolution runs as a GEMM over the subsampled input "
                                   "(cuda_conv_sm90_packed)");
        }
        auto l = make_plan(p, packed_);
        if (!l.is_ok()) return l.status();
        size_t unused = 0;
        for (int i = 0; i < l.value().phases; ++i) {
            const Phase& f = l.value().phase[i];
            if (!f.empty())
                ODNN_RETURN_IF_ERROR(
                    core_call(sm90::TcOp::dgrad, type_of(p), tc_phase(p, l.value(), f), sm90::TcCall::check, &unused));
        }
        if (l.value().phases > 0) return Status::ok();
        sm90::TcProblem t = tc_base(p, l.value());
        if (p.kind == ConvKind::bwd_filter && !l.value().gemm) t.n = static_cast<int>(l.value().per);
        return core_call(op_of(p.kind), type_of(p), t, sm90::TcCall::check, &unused);
    }

    size_t workspace_size(const ConvProblem& p) const override {
        auto l = make_plan(p, packed_);
        return l.is_ok() ? l.value().total : 0;
    }

    // (FLOAT without TF32 runs the FMA kernels)
    bool tensor_cores(const ConvProblem& p) const override { return type_of(p) != sm90::TcType::f32; }

    Status execute(const core::Handle& h, const ConvProblem& p) const override {
        // Alignment is only known now; the generic kernel needs no workspace.
        if ((!packed_ && (!aligned16(p.x_data) || !aligned16(p.w_data) || !aligned16(p.y_data))) ||
            (p.workspace && !aligned16(p.workspace)))
            return run_generic(h, p);
        auto lo = make_plan(p, packed_);
        if (!lo.is_ok()) return lo.status();
        Plan l = lo.value();
        if (packed_) decide_direct(p, &l);
        char* ws = static_cast<char*>(p.workspace);
        const cudaStream_t st = h.stream;
        const int64_t P = p.out[1], Q = p.out[2];
        // The kernel's operands: the caller's tensors, or packed copies.
        const void* x = p.x_data;
        const void* w = p.w_data;
        const void* y = p.y_data;
        if (packed_) {
            ODNN_RETURN_IF_ERROR(pack_operands(p, l, ws, st));
            x = l.x_direct ? p.x_data : ws + l.x_off;
            w = l.w_direct ? p.w_data : ws + l.w_off;
            y = l.y_direct ? p.y_data : ws + l.y_off;
        }
        // The output is the caller's tensor (written through alpha / beta) unless packed.
        // (Never for filter gradients: they are fp32 partial sums that unpack adds.)
        const bool out_direct = p.kind != ConvKind::bwd_filter &&
                                (!packed_ || (p.kind == ConvKind::fwd ? l.y_direct : l.x_direct));
        sm90::TcProblem t = tc_base(p, l);
        if (out_direct) {
            t.alpha = static_cast<float>(p.alpha);
            t.beta = static_cast<float>(p.beta);
        }
        t.workspace = l.core_bytes ? ws + l.core_off : nullptr;
        t.stream = st;
        size_t unused = 0;
        if (l.phases > 0) {
            ODNN_RETURN_IF_ERROR(run_phases(p, l, out_direct, ws, w, y, st));
            if (out_direct) return Status::ok();
            return unpack(p, l, ws + l.x_off, p.x.dtype, 1, 0, st);
        }
        if (p.kind != ConvKind::bwd_filter || l.gemm) {
            const size_t ws_out = p.kind == ConvKind::fwd ? l.y_off : p.kind == ConvKind::bwd_data ? l.x_off : l.part_off;
            t.a = p.kind == ConvKind::fwd ? x : y;
            t.b = p.kind == ConvKind::bwd_filter ? x : w;
            void* caller_out = p.kind == ConvKind::fwd ? p.y_data : p.kind == ConvKind::bwd_data ? p.x_data : p.w_data;
            t.out = out_direct ? caller_out : ws + ws_out;
            ODNN_RETURN_IF_ERROR(core_call(op_of(p.kind), type_of(p), t, sm90::TcCall::run, &unused));
            if (out_direct) return Status::ok();
            if (t.out_f32) return col2im(p, l, ws + l.x_off, st);
            if (l.gemm)
                return unpack(p, l, ws + ws_out, CUDNN_DATA_FLOAT, l.splits, static_cast<int64_t>(filter_elems(p, l)),
                              st);
            return unpack(p, l, ws + ws_out, p.x.dtype, 1, 0, st);
        }
        // Filter gradient: batch slices on their own streams, fp32 partials, then one sum.
        const size_t slice_elems = static_cast<size_t>(filter_elems(p, l));
        t.alpha = 1.0f;
        t.beta = 0.0f;
        {
            std::lock_guard<std::mutex> lock(slice_streams().mutex());
            cudaStream_t streams[SliceStreams::kMax];
            const int n = l.splits;
            ODNN_RETURN_IF_ERROR(slice_streams().fork(st, n > 1 ? n : 0, streams));
            for (int s = 0; s < n; ++s) {
                const int64_t n0 = s * l.per;
                t.n = static_cast<int>(std::min<int64_t>(l.per, p.n - n0));
                t.a = static_cast<const char*>(y) + static_cast<size_t>(n0 * P * Q * l.kp) * 2;
                t.b = static_cast<const char*>(x) + static_cast<size_t>(n0 * x_image(p, l)) * 2;
                t.out = ws + l.part_off + s * slice_elems * 4;
                t.workspace = l.core_bytes ? ws + l.core_off + s * align256(l.core_bytes) : nullptr;
                t.stream = n > 1 ? streams[s] : st;
                ODNN_RETURN_IF_ERROR(core_call(op_of(p.kind), type_of(p), t, sm90::TcCall::run, &unused));
            }
            if (n > 1) ODNN_RETURN_IF_ERROR(slice_streams().join(st, n));
        }
        return unpack(p, l, ws + l.part_off, CUDNN_DATA_FLOAT, l.splits, static_cast<int64_t>(slice_elems), st);
    }

private:
    // The packed path's copies of the inputs that are not used in place (Plan).
    static Status pack_operands(const ConvProblem& p, const Plan& l, char* ws, cudaStream_t st) {
        const int64_t H = p.in[1], W = p.in[2], P = p.out[1], Q = p.out[2], R = p.filt[1], S = p.filt[2];
        auto pack = [&](const void* src, const ConvTensor& t, int64_t a, int64_t ap, int64_t c, int64_t cp, int64_t hh,
                        int64_t ww, bool flip, size_t off) -> Status {
            const int64_t total = ap * hh * ww * cp;
            const Strided4 s4 = strided(t);
            if (!flip && s4.s[4] == 1 && (hh == 1 || s4.s[3] == ww) && ap <= 65535) {
                const dim3 grid(static_cast<unsigned>((hh * ww + 31) / 32), static_cast<unsigned>((cp + 31) / 32),
                                static_cast<unsigned>(ap));
                if (p.x.dtype == CUDNN_DATA_FLOAT)
                    pack_planes_kernel<<<grid, dim3(32, 8), 0, st>>>(static_cast<const uint32_t*>(src), s4.s[0],
                                                                     s4.s[1], a, c, hh * ww, cp,
                                                                     reinterpret_cast<uint32_t*>(ws + off));
                else
                    pack_planes_kernel<<<grid, dim3(32, 8), 0, st>>>(static_cast<const uint16_t*>(src), s4.s[0],
                                                                     s4.s[1], a, c, hh * ww, cp,
                                                                     reinterpret_cast<uint16_t*>(ws + off));
                return core::cuda_check_launch("pack_planes_kernel");
            }
            if (p.x.dtype == CUDNN_DATA_FLOAT)
                pack_kernel<<<grid_for(total), 256, 0, st>>>(static_cast<const uint32_t*>(src), strided(t), a, c, hh,
                                                             ww, cp, flip, reinterpret_cast<uint32_t*>(ws + off), total);
            else
                pack_kernel<<<grid_for(total), 256, 0, st>>>(static_cast<const uint16_t*>(src), strided(t), a, c, hh,
                                                             ww, cp, flip, reinterpret_cast<uint16_t*>(ws + off), total);
            return core::cuda_check_launch("pack_kernel");
        };
        if (l.im2col) {
            const Im2colGeo g = im2col_geo(p);
            if (p.kind != ConvKind::bwd_data)
                ODNN_RETURN_IF_ERROR(
                    im2col(p.x_data, p.x, g, l.col_c, p.n, reinterpret_cast<uint16_t*>(ws + l.x_off), st));
            if (p.kind != ConvKind::bwd_filter && !l.w_direct) {
                const int64_t wt = l.kp * l.col_c;
                pack_filter_cols_kernel<<<grid_for(wt), 256, 0, st>>>(
                    static_cast<const uint16_t*>(p.w_data), strided(p.w), p.k, p.c, R, S, p.flip, l.col_c,
                    reinterpret_cast<uint16_t*>(ws + l.w_off), wt);
                ODNN_RETURN_IF_ERROR(core::cuda_check_launch("pack_filter_cols_kernel"));
            }
        } else {
            if (p.kind != ConvKind::bwd_data && !l.x_direct)
                ODNN_RETURN_IF_ERROR(pack(p.x_data, p.x, p.n, p.n, p.c, l.cp, H, W, false, l.x_off));
            if (p.kind != ConvKind::bwd_filter && !l.w_direct)
                ODNN_RETURN_IF_ERROR(pack(p.w_data, p.w, p.k, l.kp, p.c, l.cp, R, S, p.flip, l.w_off));
        }
        if (p.kind != ConvKind::fwd && !l.y_direct)
            ODNN_RETURN_IF_ERROR(pack(p.y_data, p.y, p.n, p.n, p.k, l.kp, P, Q, false, l.y_off));
        return Status::ok();
    }

    // A strided backward data, phase by phase (see Phase): into the caller's dx through
    // alpha / beta, or (packed) into the dense workspace dx.
    static Status run_phases(const ConvProblem& p, const Plan& l, bool out_direct, char* ws, const void* w,
                             const void* dy, cudaStream_t st) {
        const int64_t H = p.in[1], W = p.in[2], sh = p.stride[1], sw = p.stride[2];
        PhaseTaps pt{};
        PhaseResults pr{};
        std::fill(pt.of, pt.of + kMaxPhases, static_cast<int8_t>(-1));
        std::fill(pr.off, pr.off + kMaxPhases, int64_t{-1});
        bool taps = false;
        for (int i = 0; i < l.phases; ++i) {
            const Phase& f = l.phase[i];
            if (f.empty()) continue;
            taps = true;
            pt.of[f.r0 * sw + f.s0] = static_cast<int8_t>(i);
            pt.rn[i] = static_cast<int>(f.rn);
            pt.sn[i] = static_cast<int>(f.sn);
            pt.off[i] = static_cast<int64_t>(f.filt_off / 2);
            const int64_t ph = f.a * sw + f.b;
            pr.off[ph] = static_cast<int64_t>(f.out_off / 2);
            pr.hn[ph] = static_cast<int>(f.hn);
            pr.wn[ph] = static_cast<int>(f.wn);
        }
        if (taps) {
            const dim3 grid(grid_for(l.kp * l.cp), static_cast<unsigned>(p.filt[1] * p.filt[2]));
            gather_phase_taps_kernel<<<grid, 256, 0, st>>>(
                static_cast<const uint16_t*>(w), static_cast<int>(p.filt[1]), static_cast<int>(p.filt[2]),
                static_cast<int>(l.cp), static_cast<int>(l.kp), static_cast<int>(sh), static_cast<int>(sw), pt,
                reinterpret_cast<uint16_t*>(ws));
            ODNN_RETURN_IF_ERROR(core::cuda_check_launch("gather_phase_taps_kernel"));
        }
        for (int i = 0; i < l.phases; ++i) {
            const Phase& f = l.phase[i];
            if (f.empty()) continue;
            sm90::TcProblem t = tc_phase(p, l, f);
            t.a = dy;
            t.b = ws + f.filt_off;
            t.out = ws + f.out_off;
            t.workspace = l.core_bytes ? ws + l.core_off : nullptr;
            t.stream = st;
            size_t unused = 0;
            ODNN_RETURN_IF_ERROR(core_call(sm90::TcOp::dgrad, type_of(p), t, sm90::TcCall::run, &unused));
        }
        const int rows = static_cast<int>(p.n * H);
        const int64_t c_out = out_direct ? p.c : l.cp;  // channels written (== l.cp when direct)
        const int64_t per_row = W * (c_out / 8);
        const dim3 grid(std::min<unsigned>(grid_for(per_row), 64), static_cast<unsigned>(std::min(rows, 65535)));
        auto interleave = [&](auto tag) {
            using T = typename decltype(tag)::type;
            phase_interleave_kernel<T><<<grid, 256, 0, st>>>(
                reinterpret_cast<const T*>(ws), pr, reinterpret_cast<T*>(out_direct ? p.x_data : ws + l.x_off),
                rows, static_cast<int>(H), static_cast<int>(W), static_cast<int>(l.cp),
                static_cast<int>(c_out), static_cast<int>(sh), static_cast<int>(sw),
                out_direct ? static_cast<float>(p.alpha) : 1.0f, out_direct ? static_cast<float>(p.beta) : 0.0f);
        };
        if (p.x.dtype == CUDNN_DATA_HALF)
            interleave(Tag<__half>{});
        else
            interleave(Tag<__nv_bfloat16>{});
        return core::cuda_check_launch("phase_interleave_kernel");
    }

    // Backward data of an im2col plan: the gradient of the im2col matrix back onto dx.
    static Status col2im(const ConvProblem& p, const Plan& l, const void* dcol, cudaStream_t st) {
        const int total = static_cast<int>(p.n * p.c * p.in[1] * p.in[2]);
        auto run = [&](auto tag) {
            using T = typename decltype(tag)::type;
            col2im_kernel<T><<<grid_for(total), 256, 0, st>>>(static_cast<const float*>(dcol), im2col_geo(p),
                                                              static_cast<int>(l.col_c), static_cast<T*>(p.x_data),
                                                              strided(p.x), static_cast<float>(p.alpha),
                                                              static_cast<float>(p.beta), total);
        };
        if (p.x.dtype == CUDNN_DATA_HALF) {
            run(Tag<__half>{});
        } else {
            run(Tag<__nv_bfloat16>{});
        }
        return core::cuda_check_launch("col2im_kernel");
    }

    // Writes the workspace result back into the caller's output through alpha / beta or
    // the fused epilogue.
    static Status unpack(const ConvProblem& p, const Plan& l, const void* src, int src_dtype, int splits,
                         int64_t slice, cudaStream_t st) {
        Unpack u{};
        u.alpha = p.alpha;
        u.beta = p.beta;
        u.dtype = p.x.dtype;
        u.src_dtype = src_dtype;
        u.splits = splits;
        u.slice = slice;
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
        void* dst;
        const ConvTensor* dt;
        int64_t a, c, cp, hh, ww;
        bool flip = false;
        switch (p.kind) {
            case ConvKind::fwd:
                dst = p.y_data; dt = &p.y; a = p.n; c = p.k; cp = l.kp; hh = p.out[1]; ww = p.out[2];
                break;
            case ConvKind::bwd_data:
                dst = p.x_data; dt = &p.x; a = p.n; c = p.c; cp = l.cp; hh = p.in[1]; ww = p.in[2];
                break;
            default:
                dst = p.w_data; dt = &p.w; a = p.k; c = p.c; cp = l.im2col ? l.col_c : l.cp; hh = p.filt[1];
                ww = p.filt[2]; flip = p.flip;
                if (l.im2col) u.tap_c = p.c;
                break;
        }
        const int64_t total = a * c * hh * ww;
        const Strided4 s4 = strided(*dt);
        if (splits == 1 && src_dtype == u.dtype && !u.epi && !flip && u.tap_c == 0 && s4.s[4] == 1 &&
            (hh == 1 || s4.s[3] == ww) && a <= 65535) {
            const dim3 grid(static_cast<unsigned>((hh * ww + 31) / 32), static_cast<unsigned>((c + 31) / 32),
                            static_cast<unsigned>(a));
            auto run = [&](auto tag) {
                using T = typename decltype(tag)::type;
                unpack_planes_kernel<T><<<grid, dim3(32, 8), 0, st>>>(static_cast<const T*>(src), cp,
                                                                      static_cast<T*>(dst), s4.s[0], s4.s[1], c,
                                                                      hh * ww, static_cast<float>(p.alpha),
                                                                      static_cast<float>(p.beta));
            };
            if (u.dtype == CUDNN_DATA_FLOAT)
                run(Tag<float>{});
            else if (u.dtype == CUDNN_DATA_HALF)
                run(Tag<__half>{});
            else
                run(Tag<__nv_bfloat16>{});
            return core::cuda_check_launch("unpack_planes_kernel");
        }
        unpack_kernel<<<grid_for(total), 256, 0, st>>>(src, cp, dst, s4, a, c, hh, ww, flip, u, total);
        return core::cuda_check_launch("unpack_kernel");
    }

    static Status run_generic(const core::Handle& h, const ConvProblem& p) {
        for (const auto* impl : core::ImplRegistry<ConvProblem>::get().list(core::BackendKind::cuda))
            if (std::strcmp(impl->name(), "cuda_conv_generic") == 0) return impl->execute(h, p);
        return Status(CUDNN_STATUS_INTERNAL_ERROR, "the generic CUDA convolution is not registered");
    }

    bool packed_;
};

template <bool Packed>
class CudaConvSm90As final : public CudaConvSm90 {
public:
    CudaConvSm90As() : CudaConvSm90(Packed) {}
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
ODNN_SM90_ABSENT(wgrad_m64_f16)
ODNN_SM90_ABSENT(wgrad_m64_bf16)
ODNN_SM90_ABSENT(wgrad_split_f16)
ODNN_SM90_ABSENT(wgrad_split_bf16)
ODNN_SM90_ABSENT(wgrad_split_m64_f16)
ODNN_SM90_ABSENT(wgrad_split_m64_bf16)
#undef ODNN_SM90_ABSENT
#define ODNN_SM90_GEMM_ABSENT(fn)                                                                          \
    core::Status fn(const GemmProblem&, TcCall, size_t*) {                                                 \
        return core::Status(CUDNN_STATUS_NOT_SUPPORTED,                                                    \
                            "odnn was built without the sm_90a tensor-core kernels (CUTLASS, arch 90a)");  \
    }
ODNN_SM90_GEMM_ABSENT(gemm_fprop_f16)
ODNN_SM90_GEMM_ABSENT(gemm_fprop_bf16)
ODNN_SM90_GEMM_ABSENT(gemm_dgrad_f16)
ODNN_SM90_GEMM_ABSENT(gemm_dgrad_bf16)
ODNN_SM90_GEMM_ABSENT(gemm_dgrad_f16_f32)
ODNN_SM90_GEMM_ABSENT(gemm_dgrad_bf16_f32)
ODNN_SM90_GEMM_ABSENT(gemm_wgrad_f16)
ODNN_SM90_GEMM_ABSENT(gemm_wgrad_bf16)
#undef ODNN_SM90_GEMM_ABSENT
}  // namespace sm90
#endif

#ifndef ODNN_WITH_SM80_KERNELS
// Built without the Ampere-class instances (no architecture >= 8.0, or no CUTLASS headers).
namespace sm80 {
#define ODNN_SM80_ABSENT(fn)                                                                              \
    core::Status fn(const TcProblem&, TcCall, size_t*) {                                                  \
        return core::Status(CUDNN_STATUS_NOT_SUPPORTED,                                                   \
                            "odnn was built without the sm_80 tensor-core kernels (CUTLASS, arch >= 80)"); \
    }
ODNN_SM80_ABSENT(fprop_f16)
ODNN_SM80_ABSENT(fprop_bf16)
ODNN_SM80_ABSENT(dgrad_f16)
ODNN_SM80_ABSENT(dgrad_bf16)
ODNN_SM80_ABSENT(wgrad_f16)
ODNN_SM80_ABSENT(wgrad_bf16)
ODNN_SM80_ABSENT(fprop_tf32)
ODNN_SM80_ABSENT(dgrad_tf32)
ODNN_SM80_ABSENT(wgrad_tf32)
ODNN_SM80_ABSENT(fprop_f32)
ODNN_SM80_ABSENT(dgrad_f32)
ODNN_SM80_ABSENT(wgrad_f32)
#undef ODNN_SM80_ABSENT
}  // namespace sm80
#endif

ODNN_REGISTER_IMPL(cuda, ConvProblem, CudaConvSm90As<false>, core::kPriorityFast);
// Below the direct kernels, above the generic ones.
ODNN_REGISTER_IMPL(cuda, ConvProblem, CudaConvSm90As<true>, (core::kPriorityFast + core::kPriorityGeneric) / 2);

}  // namespace odnn::cuda
