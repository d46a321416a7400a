// One CUTLASS 3.x Hopper GEMM for the convolutions that are plain matrix products (1 x 1
// filters without padding, and the im2col matrices of small-channel layers), assembled
// from CUTLASS's collective builders: TMA + WGMMA mainloop (fp32 accumulation),
// warp-specialised cooperative persistent kernel, TMA epilogue computing
// alpha * acc + beta * C. Batched (L > 1): a filter gradient's reduction cut into L
// pieces, each written as fp32 partial sums the caller adds (CUTLASS's stream-K fixup
// serialises its pieces per tile, which a 64 x 64 filter over 400k pixels cannot afford).
// Included by the instance files only (sm_90a).
#pragma once

// (CUTLASS's headers are order-sensitive: this is the order its own examples use.)
// clang-format off
#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/gemm/gemm.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>
#include <cutlass/util/packed_stride.hpp>
// clang-format on

#include "cuda/conv_sm90.hpp"
#include "cuda/cutlass_run.cuh"

namespace odnn::cuda::sm90 {

// LayoutA / LayoutB in CUTLASS's terms: A is M x K (RowMajor: K contiguous), B is K x N
// (ColumnMajor: K contiguous), D is M x N row-major.
template <class Element, class ElementOut, class LayoutA, class LayoutB>
struct Sm90Gemm {
    static constexpr int kAlign = 128 / cutlass::sizeof_bits<Element>::value;
    static constexpr int kAlignOut = 128 / cutlass::sizeof_bits<ElementOut>::value;
    using LayoutD = cutlass::layout::RowMajor;
    using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
    using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, ElementOut, LayoutD, kAlignOut, ElementOut,
        LayoutD, kAlignOut, cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

    using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlign, Element, LayoutB, kAlign, float,
        TileShape, ClusterShape,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
        cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

    using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue,
                                                        cutlass::gemm::PersistentScheduler>;
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

    static typename Gemm::Arguments arguments(const GemmProblem& p) {
        using StrideA = typename Kernel::StrideA;
        using StrideB = typename Kernel::StrideB;
        using StrideC = typename Kernel::StrideC;
        using StrideD = typename Kernel::StrideD;
        const StrideA sa = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(p.m, p.k, p.batch));
        const StrideB sb = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(p.n, p.k, p.batch));
        const StrideC sc = cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(p.m, p.n, p.batch));
        const StrideD sd = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(p.m, p.n, p.batch));
        cutlass::KernelHardwareInfo hw;
        hw.device_id = p.device;
        hw.sm_count = p.sm_count;
        using O = ElementOut;
        return typename Gemm::Arguments{
            p.batch > 1 ? cutlass::gemm::GemmUniversalMode::kBatched : cutlass::gemm::GemmUniversalMode::kGemm,
            {p.m, p.n, p.k, p.batch},
            {static_cast<const Element*>(p.a), sa, static_cast<const Element*>(p.b), sb},
            {{p.alpha, p.beta}, p.beta != 0.0f ? static_cast<const O*>(p.out) : nullptr, sc, static_cast<O*>(p.out),
             sd},
            hw};
    }

    static core::Status call(const GemmProblem& p, TcCall what, size_t* bytes, const char* name) {
        return run_cutlass<Gemm>(arguments(p), what, bytes, p.workspace, p.stream, name);
    }
};

}  // namespace odnn::cuda::sm90

// Defines odnn::cuda::sm90::<fn>(p, call, bytes) for one operand arrangement and types.
#define ODNN_SM90_GEMM_INSTANCE(fn, element, element_out, layout_a, layout_b)                             \
    namespace odnn::cuda::sm90 {                                                                       \
    core::Status fn(const GemmProblem& p, TcCall call, size_t* bytes) {                                \
        return Sm90Gemm<element, element_out, cutlass::layout::layout_a, cutlass::layout::layout_b>::call( \
            p, call, bytes, "sm90 " #fn);                                                              \
    }                                                                                                  \
    }
