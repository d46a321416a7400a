// Hopper (sm_90a) tensor-core convolutions: CUTLASS 3.x implicit-GEMM kernels (TMA
// im2col loads, WGMMA, warp-specialised), one instance per operator, data type and tile,
// defined in sm90/*.cu (up to four a file).
// This header is plain C++: the dispatcher (conv_tc.cu) sees no CUTLASS type.
//
// Tensors are channels-last and dense: activations N, H, W, C; filters K, R, S, C;
// outputs N, P, Q, K. The operand roles follow the operator:
//   fprop  a = x,  b = w, out = y
//   dgrad  a = dy, b = w, out = dx
//   wgrad  a = dy, b = x, out = dw
// out = alpha * conv + beta * out (out is not read when beta = 0). fprop and dgrad write
// the input type; wgrad writes FLOAT (partial sums of a batch slice, reduced by the caller).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/status.hpp"

namespace odnn::cuda::sm90 {

struct TcProblem {
    int n = 1, h = 1, w = 1, c = 1;  // activation (x / dx)
    int k = 1, r = 1, s = 1;         // filter K, R, S (and C)
    int pad[2] = {0, 0}, stride[2] = {1, 1}, dil[2] = {1, 1};
    int pad_hi[2] = {-1, -1};  // upper padding; -1: as `pad`
    const void* a = nullptr;
    const void* b = nullptr;
    void* out = nullptr;
    float alpha = 1.0f, beta = 0.0f;
    void* workspace = nullptr;
    cudaStream_t stream = nullptr;
    // Used where the problem runs as a GEMM (GemmProblem): reduction pieces, fp32 dgrad.
    int batch = 1;
    bool out_f32 = false;
};

enum class TcCall {
    check,      // OK when the kernel can run the problem, NOT_SUPPORTED with the reason otherwise
    workspace,  // *bytes = the kernel's own workspace
    run,
};

enum class TcOp { fprop, dgrad, wgrad };
// tf32 / f32: FLOAT data in TF32 / in fp32 FMAs (the Ampere-class kernels only)
enum class TcType { f16, bf16, tf32, f32 };

// A dense matrix product D (m x n, row-major) = alpha * A B + beta * D for the
// convolutions that are one (1 x 1 filters without padding, im2col matrices). The operand
// arrangement follows the operator, with NPQ = N * P * Q output pixels:
//   fprop  A = x   [m = NPQ][k = C],   B = w [n = K][k = C]    (both K-contiguous)
//   dgrad  A = dy  [m = NPQ][k = K],   B = w [k = K][n = C]
//   wgrad  A = dy  [k = NPQ][m = K],   B = x [k = NPQ][n = C]  (the reduction outermost)
// Every dimension is a multiple of 8 where it is contiguous. fprop writes the data type;
// wgrad writes FLOAT; dgrad writes the data type or, with `out_f32`, FLOAT. `batch` > 1:
// L products of consecutive, equally long reduction pieces (a and b advance by m * k and
// n * k elements, out by m * n), each written whole (the caller sums them).
struct GemmProblem {
    int m = 0, n = 0, k = 0;
    int batch = 1;
    bool out_f32 = false;
    const void* a = nullptr;
    const void* b = nullptr;
    void* out = nullptr;
    float alpha = 1.0f, beta = 0.0f;
    int device = 0, sm_count = 0;  // the scheduler plans persistent work for this device
    void* workspace = nullptr;
    cudaStream_t stream = nullptr;
};

// Defined by the instance files; NOT_SUPPORTED when odnn was built without them.
core::Status fprop_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status fprop_bf16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status dgrad_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status dgrad_bf16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_bf16(const TcProblem& p, TcCall call, size_t* bytes);
// Filter gradients with K <= 64: 64 x 128 tiles (wgrad_tile_m).
core::Status wgrad_m64_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_m64_bf16(const TcProblem& p, TcCall call, size_t* bytes);
// Filter gradients in one launch with the reduction over N * P * Q cut into `p.batch`
// pieces, each writing its fp32 partial sums at p.out + piece * K * R * S * C (alpha = 1,
// beta = 0: the caller adds the pieces). 64 x 64 tiles where K <= 64, else 128 x 128.
core::Status wgrad_split_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_split_bf16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_split_m64_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_split_m64_bf16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status gemm_fprop_f16(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_fprop_bf16(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_dgrad_f16(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_dgrad_bf16(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_dgrad_f16_f32(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_dgrad_bf16_f32(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_wgrad_f16(const GemmProblem& p, TcCall call, size_t* bytes);
core::Status gemm_wgrad_bf16(const GemmProblem& p, TcCall call, size_t* bytes);

// Rows of the output tile the implicit-GEMM filter gradient uses for K = `k` (the 64-row
// instances where K <= 64: a 128-row tile would be half empty).
inline int wgrad_tile_m(int k) { return k <= 64 ? 64 : 128; }
// Output tile of the split filter gradient for K = `k` (rows) and its columns, and how
// many of its CTAs an SM holds (their shared memory: 6 stages of 16 or 32 KiB).
inline int wgrad_split_tile_m(int k) { return k <= 64 ? 64 : 128; }
inline int wgrad_split_tile_n(int k) { return k <= 64 ? 64 : 128; }
inline int wgrad_split_ctas_per_sm(int k) { return k <= 64 ? 2 : 1; }

inline core::Status dispatch_wgrad_split(TcType t, const TcProblem& p, TcCall call, size_t* bytes) {
    const bool h = t == TcType::f16;
    if (wgrad_split_tile_m(p.k) == 64)
        return h ? wgrad_split_m64_f16(p, call, bytes) : wgrad_split_m64_bf16(p, call, bytes);
    return h ? wgrad_split_f16(p, call, bytes) : wgrad_split_bf16(p, call, bytes);
}

inline core::Status dispatch(TcOp op, TcType t, const TcProblem& p, TcCall call, size_t* bytes) {
    const bool h = t == TcType::f16;
    switch (op) {
        case TcOp::fprop: return h ? fprop_f16(p, call, bytes) : fprop_bf16(p, call, bytes);
        case TcOp::dgrad: return h ? dgrad_f16(p, call, bytes) : dgrad_bf16(p, call, bytes);
        case TcOp::wgrad:
            if (wgrad_tile_m(p.k) == 64) return h ? wgrad_m64_f16(p, call, bytes) : wgrad_m64_bf16(p, call, bytes);
            return h ? wgrad_f16(p, call, bytes) : wgrad_bf16(p, call, bytes);
    }
    return core::Status(CUDNN_STATUS_INTERNAL_ERROR, "unknown tensor-core operator");
}

inline core::Status dispatch_gemm(TcOp op, TcType t, const GemmProblem& p, TcCall call, size_t* bytes) {
    const bool h = t == TcType::f16;
    switch (op) {
        case TcOp::fprop: return h ? gemm_fprop_f16(p, call, bytes) : gemm_fprop_bf16(p, call, bytes);
        case TcOp::dgrad:
            if (p.out_f32) return h ? gemm_dgrad_f16_f32(p, call, bytes) : gemm_dgrad_bf16_f32(p, call, bytes);
            return h ? gemm_dgrad_f16(p, call, bytes) : gemm_dgrad_bf16(p, call, bytes);
        case TcOp::wgrad: return h ? gemm_wgrad_f16(p, call, bytes) : gemm_wgrad_bf16(p, call, bytes);
    }
    return core::Status(CUDNN_STATUS_INTERNAL_ERROR, "unknown tensor-core operator");
}

}  // namespace odnn::cuda::sm90
