// One CUTLASS 2.x implicit-GEMM convolution for sm_80 and later (cp.async multistage
// mainloop, mma.sync with fp32 accumulation, alpha * acc + beta * C epilogue). FLOAT
// data multiplies in TF32 (CUTLASS converts each operand as it enters the tensor core),
// or, with `Simt`, in fp32 FMAs on the CUDA cores (the FMA math type). Backward
// data uses CUTLASS's strided-dgrad kernel, which also serves stride 1; filter gradients
// write `batch` fp32 partial sums (parallel split-K). Included by the instance files only.
#pragma once

// clang-format off
#include <cutlass/cutlass.h>
#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/conv/kernel/default_conv2d_fprop.h>
#include <cutlass/conv/kernel/default_conv2d_dgrad.h>
#include <cutlass/conv/kernel/default_conv2d_wgrad.h>
#include <cutlass/conv/device/implicit_gemm_convolution.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>
// clang-format on

#include <type_traits>

#include "cuda/conv_sm80.hpp"
#include "cuda/cutlass_run.cuh"

namespace odnn::cuda::sm80 {

using cutlass::conv::Operator;

template <Operator Op, class Element, bool Simt = false>
struct Sm80Conv {
    static constexpr bool kWgrad = Op == Operator::kWgrad;
    using ElementOut = std::conditional_t<kWgrad, float, Element>;
    using Layout = cutlass::layout::TensorNHWC;
    // 128 x 128 tiles (four 64 x 64 warps) for fprop / dgrad; 64 x 128 (four 32 x 64
    // warps) for filter gradients, whose K is often 64 and which split the reduction.
    // (Measured on the H200, 64 x 56 x 56 3x3 filter gradient: 64 x 256 tiles with 64 x 64
    // warps took 0.37 ms against 0.23 ms for these.) A k-block is 64 bytes of a row: 32
    // 16-bit values or 16 FLOAT ones.
    // FMA kernels: k-blocks of 8 values, 32 x 64 warp tiles of scalar FMAs.
    static_assert(!Simt || std::is_same_v<Element, float>, "FMA kernels are FLOAT only");
    static constexpr bool kTf32 = std::is_same_v<Element, float> && !Simt;
    static constexpr int kK = Simt ? 8 : kTf32 ? 16 : 32;
    using Tile = std::conditional_t<kWgrad, cutlass::gemm::GemmShape<kWgradTileM, kWgradTileN, kK>,
                                    cutlass::gemm::GemmShape<128, 128, kK>>;
    using Warp = std::conditional_t<kWgrad || Simt, cutlass::gemm::GemmShape<32, 64, kK>,
                                    cutlass::gemm::GemmShape<64, 64, kK>>;
    using Instruction = std::conditional_t<Simt, cutlass::gemm::GemmShape<1, 1, 1>,
                                           cutlass::gemm::GemmShape<16, 8, kTf32 ? 8 : 16>>;
    static constexpr int kStages = kWgrad && !Simt ? 5 : 4;
    static constexpr int kAlign = 128 / cutlass::sizeof_bits<Element>::value;
    static constexpr int kAlignOut = Simt ? 1 : 128 / cutlass::sizeof_bits<ElementOut>::value;
    using Epilogue = cutlass::epilogue::thread::LinearCombination<ElementOut, kAlignOut, float, float>;
    using Arch = cutlass::arch::Sm80;
    using TensorOp = std::conditional_t<Simt, cutlass::arch::OpClassSimt, cutlass::arch::OpClassTensorOp>;
    using Math = cutlass::arch::OpMultiplyAdd;
    static constexpr auto kIter = cutlass::conv::IteratorAlgorithm::kOptimized;

    using Kernel = typename std::conditional_t<
        Op == Operator::kFprop,
        cutlass::conv::kernel::DefaultConv2dFprop<Element, Layout, Element, Layout, ElementOut, Layout, float,
                                                  TensorOp, Arch, Tile, Warp, Instruction, Epilogue,
                                                  cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<4>,
                                                  kStages, Math, kIter>,
        std::conditional_t<
            Op == Operator::kDgrad,
            cutlass::conv::kernel::DefaultConv2dDgrad<
                Element, Layout, Element, Layout, ElementOut, Layout, float, TensorOp, Arch, Tile, Warp,
                Instruction, Epilogue, cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>,
                kStages, Math, kIter, cutlass::conv::StrideSupport::kStrided>,
            cutlass::conv::kernel::DefaultConv2dWgrad<Element, Layout, Element, Layout, ElementOut, Layout, float,
                                                      TensorOp, Arch, Tile, Warp, Instruction, Epilogue,
                                                      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
                                                      kStages, Math, kIter>>>::Kernel;
    using Conv = cutlass::conv::device::ImplicitGemmConvolution<Kernel>;

    static cutlass::conv::Conv2dProblemSize problem(const TcProblem& p) {
        const int hi0 = p.pad_hi[0] < 0 ? p.pad[0] : p.pad_hi[0], hi1 = p.pad_hi[1] < 0 ? p.pad[1] : p.pad_hi[1];
        // The iterators use the lower padding and the output extent: an upper padding
        // other than the lower one is carried by P and Q.
        const int P = (p.h + p.pad[0] + hi0 - p.dil[0] * (p.r - 1) - 1) / p.stride[0] + 1;
        const int Q = (p.w + p.pad[1] + hi1 - p.dil[1] * (p.s - 1) - 1) / p.stride[1] + 1;
        return cutlass::conv::Conv2dProblemSize(p.n, p.h, p.w, p.c, p.k, p.r, p.s, P, Q, p.pad[0], p.pad[1],
                                                p.stride[0], p.stride[1], p.dil[0], p.dil[1],
                                                cutlass::conv::Mode::kCrossCorrelation, kWgrad ? p.batch : 1);
    }

    static typename Conv::Arguments arguments(const TcProblem& p) {
        const auto ps = problem(p);
        using cutlass::conv::implicit_gemm_tensor_a_extent;
        using cutlass::conv::implicit_gemm_tensor_b_extent;
        using cutlass::conv::implicit_gemm_tensor_c_extent;
        const auto ea = implicit_gemm_tensor_a_extent(Op, ps), eb = implicit_gemm_tensor_b_extent(Op, ps),
                   ec = implicit_gemm_tensor_c_extent(Op, ps);
        auto* out = static_cast<ElementOut*>(p.out);
        typename Conv::Arguments args(
            ps, {const_cast<Element*>(static_cast<const Element*>(p.a)), Layout::packed(ea)},
            {const_cast<Element*>(static_cast<const Element*>(p.b)), Layout::packed(eb)},
            {out, Layout::packed(ec)}, {out, Layout::packed(ec)}, {p.alpha, kWgrad ? 0.0f : p.beta},
            kWgrad ? cutlass::conv::SplitKMode::kParallel : cutlass::conv::SplitKMode::kSerial);
        return args;
    }

    static core::Status call(const TcProblem& p, TcCall what, size_t* bytes, const char* name) {
        if (Op == Operator::kDgrad && (p.dil[0] != 1 || p.dil[1] != 1) && (p.stride[0] != 1 || p.stride[1] != 1))
            return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "%s: stride > 1 with dilation > 1", name);
        const auto args = arguments(p);
        if (kWgrad && p.batch > 1) {
            // Parallel split-K: the partial sums are the output itself (CUTLASS also clears
            // its workspace, which it sizes as those partials: the output serves).
            if (what == TcCall::workspace) {
                const cutlass::Status can = Conv::can_implement(args);
                if (can != cutlass::Status::kSuccess)
                    return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "%s cannot run this problem: %s", name,
                                             cutlass::cutlassGetStatusString(can));
                *bytes = 0;
                return core::Status::ok();
            }
            return sm90::run_cutlass<Conv>(args, what, bytes, p.out, p.stream, name);
        }
        return sm90::run_cutlass<Conv>(args, what, bytes, p.workspace, p.stream, name);
    }
};

}  // namespace odnn::cuda::sm80

// Defines odnn::cuda::sm80::<fn>(p, call, bytes) for one operator and element type.
#define ODNN_SM80_CONV_INSTANCE(fn, op, element)                                                       \
    namespace odnn::cuda::sm80 {                                                                       \
    core::Status fn(const TcProblem& p, TcCall call, size_t* bytes) {                                  \
        return Sm80Conv<cutlass::conv::Operator::op, element>::call(p, call, bytes, "sm80 " #fn);      \
    }                                                                                                  \
    }


// The FMA (CUDA-core) variant of one operator, FLOAT data.
#define ODNN_SM80_FMA_INSTANCE(fn, op)                                                                 \
    namespace odnn::cuda::sm80 {                                                                       \
    core::Status fn(const TcProblem& p, TcCall call, size_t* bytes) {                                  \
        return Sm80Conv<cutlass::conv::Operator::op, float, true>::call(p, call, bytes, "sm80 " #fn);  \
    }                                                                                                  \
    }
