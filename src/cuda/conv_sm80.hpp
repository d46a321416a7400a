// Ampere-class (sm_80 and later) tensor-core convolutions: CUTLASS 2.x implicit-GEMM
// kernels (cp.async multistage mainloop, mma.sync), one instance per operator and data
// type, the four of an operator in sm80/conv_sm80_<op>.cu.
// They serve compute capability 8.x devices, and on Hopper the two problems the sm_90a
// kernels handle poorly:
//   - backward data with stride > 1: one launch over every phase, writing dx's
//     interleaved positions directly (the sm_90a path needs a launch per phase and an
//     interleave pass, see conv_tc.cu);
//   - filter gradients with few output tiles: the reduction split `batch` ways inside one
//     launch (the sm_90a path launches one kernel per batch slice).
// Same problem description as the sm_90a kernels (TcProblem, conv_sm90.hpp), plain C++.
//   fprop  out = alpha * conv(x = a, w = b) + beta * out            (input type)
//   dgrad  out = alpha * dgrad(dy = a, w = b) + beta * out          (input type, any stride)
//   wgrad  out[i] = partial filter gradient of reduction piece i    (FLOAT, i < batch:
//          `batch` pieces of about equal length; the caller sums them)
// Tensors are dense channels-last, C and K multiples of 8, 16-byte aligned; dilation
// must be 1 for strided backward data.
#pragma once

#include "cuda/conv_sm90.hpp"

namespace odnn::cuda::sm80 {

using sm90::TcCall;
using sm90::TcOp;
using sm90::TcProblem;
using sm90::TcType;

// Defined by the instance files; NOT_SUPPORTED when odnn was built without them.
core::Status fprop_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status fprop_bf16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status dgrad_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status dgrad_bf16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_f16(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_bf16(const TcProblem& p, TcCall call, size_t* bytes);
// FLOAT data, TF32 multiplies, fp32 accumulation.
core::Status fprop_tf32(const TcProblem& p, TcCall call, size_t* bytes);
core::Status dgrad_tf32(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_tf32(const TcProblem& p, TcCall call, size_t* bytes);
// FLOAT data, fp32 FMAs on the CUDA cores (the FMA math type).
core::Status fprop_f32(const TcProblem& p, TcCall call, size_t* bytes);
core::Status dgrad_f32(const TcProblem& p, TcCall call, size_t* bytes);
core::Status wgrad_f32(const TcProblem& p, TcCall call, size_t* bytes);

// Output tile of the filter-gradient instances (K rows x C * R * S columns).
constexpr int kWgradTileM = 64, kWgradTileN = 128;

inline core::Status dispatch(TcOp op, TcType t, const TcProblem& p, TcCall call, size_t* bytes) {
    const bool h = t == TcType::f16;
    if (t == TcType::tf32) {
        switch (op) {
            case TcOp::fprop: return sm80::fprop_tf32(p, call, bytes);
            case TcOp::dgrad: return sm80::dgrad_tf32(p, call, bytes);
            case TcOp::wgrad: return sm80::wgrad_tf32(p, call, bytes);
        }
    }
    if (t == TcType::f32) {
        switch (op) {
            case TcOp::fprop: return sm80::fprop_f32(p, call, bytes);
            case TcOp::dgrad: return sm80::dgrad_f32(p, call, bytes);
            case TcOp::wgrad: return sm80::wgrad_f32(p, call, bytes);
        }
    }
    switch (op) {
        // (qualified: argument-dependent lookup would also find sm90's namesakes)
        case TcOp::fprop: return h ? sm80::fprop_f16(p, call, bytes) : sm80::fprop_bf16(p, call, bytes);
        case TcOp::dgrad: return h ? sm80::dgrad_f16(p, call, bytes) : sm80::dgrad_bf16(p, call, bytes);
        case TcOp::wgrad: return h ? sm80::wgrad_f16(p, call, bytes) : sm80::wgrad_bf16(p, call, bytes);
    }
    return core::Status(CUDNN_STATUS_INTERNAL_ERROR, "unknown tensor-core operator");
}

}  // namespace odnn::cuda::sm80
