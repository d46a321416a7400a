// One CUTLASS 3.x Hopper implicit-GEMM convolution, assembled from CUTLASS's collective
// builders: TMA im2col mainloop with WGMMA (fp32 accumulation), TMA epilogue computing
// alpha * acc + beta * C. Included by the instance files only (compiled for sm_90a).
#pragma once

// (CUTLASS's headers are order-sensitive: this is the order its own examples use.)
// clang-format off
#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/conv/convolution.h>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/conv/dispatch_policy.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/conv/device/conv_universal_adapter.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/util/packed_stride.hpp>
// clang-format on

#include <type_traits>

#include "cuda/conv_sm90.hpp"
#include "cuda/cutlass_run.cuh"

namespace odnn::cuda::sm90 {

// The 2-D convolution as CUTLASS states it: activation N, H, W, C and filter K, R, S, C,
// both dense channels-last; the upper padding is `pad` unless pad_hi says otherwise.
template <cutlass::conv::Operator Op>
cutlass::conv::ConvProblemShape<Op, 2> conv_shape(const TcProblem& p) {
    const int hi0 = p.pad_hi[0] < 0 ? p.pad[0] : p.pad_hi[0], hi1 = p.pad_hi[1] < 0 ? p.pad[1] : p.pad_hi[1];
    return cutlass::conv::ConvProblemShape<Op, 2>(cutlass::conv::Mode::kCrossCorrelation, {p.n, p.h, p.w, p.c},
                                                  {p.k, p.r, p.s, p.c}, {p.pad[0], p.pad[1]}, {hi0, hi1},
                                                  {p.stride[0], p.stride[1]}, {p.dil[0], p.dil[1]}, 1);
}

// Wgrad writes fp32 partial sums (the caller reduces split-batch slices and converts);
// fprop and dgrad write the input type.
template <cutlass::conv::Operator Op, class Element, class TileShape>
struct Sm90Conv {
    static constexpr int kAlign = 128 / cutlass::sizeof_bits<Element>::value;
    using ElementOut = std::conditional_t<Op == cutlass::conv::Operator::kWgrad, float, Element>;
    static constexpr int kAlignOut = 128 / cutlass::sizeof_bits<ElementOut>::value;
    using Layout = cutlass::layout::TensorNHWC;
    // The output's layout tag: activations for fprop / dgrad, the K, (C, S, R) filter for wgrad.
    using LayoutOut = std::conditional_t<Op == cutlass::conv::Operator::kWgrad, cutlass::layout::TensorKCSR, Layout>;
    using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, ElementOut, LayoutOut, kAlignOut,
        ElementOut, LayoutOut, kAlignOut, cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;

    using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Op, Element, Layout, kAlign, Element, Layout, kAlign,
        float, TileShape, ClusterShape,
        cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
        cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;

    using ProblemShape = cutlass::conv::ConvProblemShape<Op, Mainloop::DispatchPolicy::NumSpatialDimensions>;
    using Kernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, Mainloop, Epilogue>;
    using Conv = cutlass::conv::device::ConvUniversalAdapter<Kernel>;
    using StrideC = typename Kernel::StrideC;
    using StrideD = typename Kernel::StrideD;

    static typename Conv::Arguments arguments(const TcProblem& p) {
        static_assert(std::is_same_v<ProblemShape, cutlass::conv::ConvProblemShape<Op, 2>>);
        const ProblemShape shape = conv_shape<Op>(p);
        StrideC sc{};
        StrideD sd{};
        if constexpr (Op == cutlass::conv::Operator::kWgrad) {
            sc = cutlass::make_cute_packed_stride(StrideC{}, shape.shape_C, shape.stride_C, Op);
            sd = cutlass::make_cute_packed_stride(StrideD{}, shape.shape_C, shape.stride_C, Op);
        } else {
            cute::for_each(cute::make_seq<cute::rank<0>(StrideC{})>{},
                           [&](auto i) { cute::get<0, i>(sc) = shape.stride_C[ProblemShape::RankT - 2 - i]; });
            cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{},
                           [&](auto i) { cute::get<0, i>(sd) = shape.stride_C[ProblemShape::RankT - 2 - i]; });
        }
        using E = Element;
        using O = ElementOut;
        typename Conv::Arguments args{
            shape,
            {static_cast<const E*>(p.a), static_cast<const E*>(p.b)},
            {{p.alpha, p.beta}, p.beta != 0.0f ? static_cast<const O*>(p.out) : nullptr, sc, static_cast<O*>(p.out),
             sd}};
        return args;
    }

    static core::Status call(const TcProblem& p, TcCall what, size_t* bytes, const char* name) {
        return run_cutlass<Conv>(arguments(p), what, bytes, p.workspace, p.stream, name);
    }
};

}  // namespace odnn::cuda::sm90

// Defines odnn::cuda::sm90::<fn>(p, call, bytes) for one operator, element type and tile.
#define ODNN_SM90_CONV_INSTANCE(fn, op, element, tile)                                                 \
    namespace odnn::cuda::sm90 {                                                                       \
    core::Status fn(const TcProblem& p, TcCall call, size_t* bytes) {                                  \
        return Sm90Conv<cutlass::conv::Operator::op, element, tile>::call(p, call, bytes, "sm90 " #fn); \
    }                                                                                                  \
    }
