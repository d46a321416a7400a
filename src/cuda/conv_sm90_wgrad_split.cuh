// A Hopper (sm_90a) filter gradient in one launch with its reduction split: CUTLASS's
// implicit-GEMM wgrad collectives (TMA im2col loads of x, WGMMA with fp32 accumulation,
// TMA epilogue) inside a kernel of odnn's own whose grid has a third dimension, the
// split. CTA (m, n, z) reduces k-blocks [z * kt / splits, (z + 1) * kt / splits) of the
// N * P * Q pixels and stores its fp32 partial filter gradient at out + z * K * R * S * C
// (the caller adds the pieces). CUTLASS's own sm90 conv kernel has no split: a filter
// gradient has few output tiles (a 64 x 64 3x3 filter is 9 of 64 x 64) over a reduction
// of 400k pixels, so without one most SMs idle; running the pieces as separate launches
// costs each launch its host time (TMA descriptors, ~15 us). Included by the instance
// files only.
#pragma once

// (conv_sm90_kernel.cuh brings CUTLASS's conv headers, in the order they need, and
// conv_shape.)
#include "cuda/conv_sm90_kernel.cuh"
// clang-format off
#include <cutlass/device_kernel.h>
#include <cutlass/pipeline/pipeline.hpp>
// clang-format on

#include <cuda_runtime_api.h>

#include "core/cuda_runtime.hpp"
#include "cuda/conv_sm90.hpp"

namespace odnn::cuda::sm90 {

template <class Element, class TileShape, int Stages>
struct WgradSplit {
    static constexpr auto kOp = cutlass::conv::Operator::kWgrad;
    static constexpr int kAlign = 128 / cutlass::sizeof_bits<Element>::value;
    static constexpr int kAlignOut = 4;  // fp32 partials, 16 bytes
    using Layout = cutlass::layout::TensorNHWC;
    // The partials: (K, (C, S, R), split) with the split's stride dynamic (CUTLASS's
    // TensorKCSR tag fixes it at 0).
    using StrideOut = cute::Stride<int64_t, cute::Stride<cute::Int<1>, int64_t, int64_t>, int64_t>;
    using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, StrideOut, kAlignOut, float, StrideOut,
        kAlignOut, cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;

    using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, kOp, Element, Layout, kAlign, Element, Layout, kAlign,
        float, TileShape, ClusterShape, cutlass::conv::collective::StageCount<Stages>,
        cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;

    using ProblemShape = cutlass::conv::ConvProblemShape<kOp, 2>;
    using TiledMma = typename Mainloop::TiledMma;
    using ProblemShapeMNKL = decltype(Mainloop::get_problem_shape_MNKL(ProblemShape{}));
    using EpiShape = decltype(cute::make_shape(cute::get<0>(ProblemShapeMNKL{}), cute::get<1>(ProblemShapeMNKL{}),
                                               cute::get<2>(ProblemShapeMNKL{}), int{}));

    struct SharedStorage {
        // (the mainloop and the epilogue never use shared memory at the same time)
        union TensorStorage {
            typename Mainloop::TensorStorage mainloop;
            typename Epilogue::TensorStorage epilogue;
        } tensors;
        struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
            alignas(16) typename Mainloop::PipelineStorage mainloop;
            alignas(16) typename Epilogue::PipelineStorage epi_load;
        } pipelines;
    };

    // The kernel object cutlass::device_kernel instantiates.
    struct Kernel {
        static constexpr int SharedStorageSize = sizeof(SharedStorage);
        static constexpr uint32_t MaxThreadsPerBlock = cute::size(TiledMma{}) + cutlass::NumThreadsPerWarpGroup;
        static constexpr uint32_t MinBlocksPerMultiprocessor = 1;

        struct Params {
            ProblemShapeMNKL problem;  // (K, (C, S, R), N * P * Q, 1)
            int splits;
            typename Mainloop::Params mainloop;
            typename Epilogue::Params epilogue;
        };

        CUTLASS_DEVICE void operator()(Params const& params, char* smem) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
            using namespace cute;
            SharedStorage& shared = *reinterpret_cast<SharedStorage*>(smem);
            const int thread = int(threadIdx.x);
            const int warp = cutlass::canonical_warp_idx_sync();
            const int warp_group = cutlass::canonical_warp_group_idx();  // 0: producer, 1: MMA
            const int wg_thread = thread % cutlass::NumThreadsPerWarpGroup;
            const int lane = cutlass::canonical_lane_idx();
            const bool producer = warp_group == 0;
            const bool load_warp = producer && warp % cutlass::NumWarpsPerWarpGroup == 0;

            if (warp == 0 && cute::elect_one_sync()) {
                Mainloop::prefetch_tma_descriptors(params.mainloop);
                Epilogue::prefetch_tma_descriptors(params.epilogue);
            }

            using MainloopPipeline = typename Mainloop::MainloopPipeline;
            typename MainloopPipeline::Params mp;
            if (load_warp) mp.role = MainloopPipeline::ThreadCategory::Producer;
            if (!producer) mp.role = MainloopPipeline::ThreadCategory::Consumer;
            mp.is_leader = wg_thread == 0;
            mp.num_consumers = cutlass::NumThreadsPerWarpGroup;
            mp.transaction_bytes = params.mainloop.tma_transaction_bytes;
            MainloopPipeline mainloop_pipeline(shared.pipelines.mainloop, mp, ClusterShape{});

            // (no source tensor: the epilogue's load pipeline only has to exist)
            using EpiLoadPipeline = typename Epilogue::LoadPipeline;
            typename EpiLoadPipeline::Params ep;
            if (load_warp) ep.role = EpiLoadPipeline::ThreadCategory::Producer;
            if (!producer) ep.role = EpiLoadPipeline::ThreadCategory::Consumer;
            ep.dst_blockid = cute::block_rank_in_cluster();
            ep.producer_arv_count = cutlass::NumThreadsPerWarp;
            ep.consumer_arv_count = cutlass::NumThreadsPerWarpGroup;
            if constexpr (Epilogue::RequiresTransactionBytes) ep.transaction_bytes = params.epilogue.tma_transaction_bytes;
            EpiLoadPipeline epi_load_pipeline(shared.pipelines.epi_load, ep);

            using EpiStorePipeline = typename Epilogue::StorePipeline;
            typename EpiStorePipeline::Params sp;
            sp.always_wait = true;
            EpiStorePipeline epi_store_pipeline(sp);

            typename Mainloop::PipelineState mainloop_consumer_state;
            typename Epilogue::LoadPipelineState epi_load_consumer_state;
            cutlass::PipelineState mainloop_producer_state = cutlass::make_producer_start_state<MainloopPipeline>();
            cutlass::PipelineState epi_store_producer_state = cutlass::make_producer_start_state<EpiStorePipeline>();
            __syncthreads();  // pipeline barriers initialised

            auto problem = append<4>(params.problem, Int<1>{});
            Mainloop mainloop;
            Epilogue epilogue(params.epilogue, shared.tensors.epilogue);
            auto load_inputs = mainloop.load_init(problem, params.mainloop);
            Tensor gA = get<0>(load_inputs);  // (BLK_M, BLK_K, m, k)
            Tensor gB = get<1>(load_inputs);  // (BLK_N, BLK_K, n, k)
            auto m_coord = idx2crd(int(blockIdx.x), shape<2>(gA));
            auto n_coord = idx2crd(int(blockIdx.y), shape<2>(gB));
            const int split = int(blockIdx.z);
            const int k_tiles = size<3>(gA);
            const int k_begin = static_cast<int>(static_cast<int64_t>(k_tiles) * split / params.splits);
            const int k_end = static_cast<int>(static_cast<int64_t>(k_tiles) * (split + 1) / params.splits);
            const int k_count = k_end - k_begin;  // >= 1: the host keeps splits <= k-blocks
            auto k_iter = make_coord_iterator(idx2crd(k_begin, shape<3>(gA)), shape<3>(gA));
            auto load_coord = make_coord(m_coord, n_coord, _, Int<0>{});
            auto store_coord = make_coord(m_coord, n_coord, _, split);
            auto store_problem = make_shape(get<0>(problem), get<1>(problem), get<2>(problem), params.splits);
            auto blk_shape = TileShape{};
            TiledMma tiled_mma;

            if (producer) {
                if (load_warp) {
                    mainloop.load(params.mainloop, mainloop_pipeline, mainloop_producer_state, load_inputs,
                                  load_coord, k_iter, k_count, lane, cute::block_rank_in_cluster(),
                                  shared.tensors.mainloop);
                    mainloop_producer_state.advance(k_count);
                    mainloop.load_tail(mainloop_pipeline, mainloop_producer_state);
                }
            } else {
                Tensor acc = partition_fragment_C(tiled_mma, take<0, 2>(blk_shape));  // (MMA, MMA_M, MMA_N)
                mainloop.mma(mainloop_pipeline, mainloop_consumer_state, acc, k_count, wg_thread,
                             shared.tensors.mainloop, params.mainloop);
                mainloop.mma_tail(mainloop_pipeline, mainloop_consumer_state, k_count);
                auto [load_next, store_next] =
                    epilogue.store(epi_load_pipeline, epi_load_consumer_state, epi_store_pipeline,
                                   epi_store_producer_state, store_problem, blk_shape, store_coord, acc, tiled_mma,
                                   wg_thread, shared.tensors.epilogue);
                epilogue.store_tail(epi_load_pipeline, load_next, epi_store_pipeline, store_next);
            }
#endif
        }
    };

    static EpiShape epi_shape(const ProblemShape& shape, int splits) {
        auto t = cutlass::conv::detail::get_transformed_problem_shape_MNKL(shape);
        return cute::make_shape(cute::get<0>(t), cute::get<1>(t), cute::product(cute::get<2>(t)), splits);
    }

    static typename Epilogue::Arguments epi_args(const TcProblem& p) {
        StrideOut d{};
        const int64_t rsc = static_cast<int64_t>(p.r) * p.s * p.c;
        cute::get<0>(d) = rsc;
        cute::get<1, 1>(d) = p.c;
        cute::get<1, 2>(d) = static_cast<int64_t>(p.s) * p.c;
        cute::get<2>(d) = rsc * p.k;
        return {{1.0f, 0.0f}, nullptr, d, static_cast<float*>(p.out), d};
    }

    // Grid (m tiles, n tiles, splits), as CUTLASS tiles the (K, (C, S, R)) output.
    static dim3 grid(const ProblemShape& shape, int splits) {
        auto mnkl = Mainloop::get_problem_shape_MNKL(shape);
        const int m = static_cast<int>(cute::size(cute::ceil_div(cute::get<0>(mnkl), cute::get<0>(TileShape{}))));
        const int n = static_cast<int>(cute::size(cute::ceil_div(cute::get<1>(mnkl), cute::get<1>(TileShape{}))));
        return dim3(m, n, splits);
    }

    // k-blocks of the N * P * Q reduction (CUTLASS's K mode).
    static int64_t k_blocks(const ProblemShape& shape) {
        const int64_t pix = cute::size<2>(Mainloop::get_problem_shape_MNKL(shape));
        return (pix + cute::size<2>(TileShape{}) - 1) / cute::size<2>(TileShape{});
    }

    static core::Status call(const TcProblem& p, TcCall what, size_t* bytes, const char* name) {
        const ProblemShape shape = conv_shape<kOp>(p);
        const int splits = p.batch;
        ODNN_REQUIRE(splits >= 1 && splits <= 65535 && splits <= k_blocks(shape), CUDNN_STATUS_NOT_SUPPORTED,
                     "%s: %d reduction pieces for %lld k-blocks", name, splits,
                     static_cast<long long>(k_blocks(shape)));
        const typename Mainloop::Arguments ma{static_cast<const Element*>(p.a), static_cast<const Element*>(p.b)};
        const typename Epilogue::Arguments ea = epi_args(p);
        const EpiShape es = epi_shape(shape, splits);
        if (!Mainloop::can_implement(shape, ma) || !Epilogue::can_implement(es, ea))
            return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "%s cannot run this problem (CUTLASS can_implement)",
                                     name);
        if (what == TcCall::check) return core::Status::ok();
        if (what == TcCall::workspace) {
            *bytes = 0;
            return core::Status::ok();
        }
        typename Kernel::Params params{Mainloop::get_problem_shape_MNKL(shape), splits,
                                       Mainloop::to_underlying_arguments(shape, ma, nullptr),
                                       Epilogue::to_underlying_arguments(es, ea, nullptr)};
        auto* fn = cutlass::device_kernel<Kernel>;
        constexpr int smem = Kernel::SharedStorageSize;
        // (every launch, as CUTLASS's adapters do: the attribute belongs to the current device)
        const cudaError_t attr = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (attr != cudaSuccess)
            return core::make_status(CUDNN_STATUS_EXECUTION_FAILED_CUDART, "%s: shared memory of %d bytes: %s", name,
                                     smem, cudaGetErrorString(attr));
        fn<<<grid(shape, splits), Kernel::MaxThreadsPerBlock, smem, p.stream>>>(params);
        return core::cuda_check_launch(name);
    }
};

}  // namespace odnn::cuda::sm90

// Defines odnn::cuda::sm90::<fn>(p, call, bytes): the split filter gradient for one element
// type, tile and stage count (`p.batch` = reduction pieces, `p.out` their fp32 partials).
#define ODNN_SM90_WGRAD_SPLIT_INSTANCE(fn, element, tile, stages)                                      \
    namespace odnn::cuda::sm90 {                                                                       \
    core::Status fn(const TcProblem& p, TcCall call, size_t* bytes) {                                  \
        return WgradSplit<element, tile, stages>::call(p, call, bytes, "sm90 " #fn);                   \
    }                                                                                                  \
    }
