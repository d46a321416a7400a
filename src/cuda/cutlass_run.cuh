// Runs one CUTLASS 3.x device adapter (conv or GEMM) for the sm_90a instance files:
// checks the arguments, reports its workspace, or initialises and launches it, mapping
// CUTLASS's and CUDA's failures to statuses that name the kernel.
#pragma once

#include <cutlass/cutlass.h>

#include "cuda/conv_sm90.hpp"

namespace odnn::cuda::sm90 {

template <class Adapter>
core::Status run_cutlass(const typename Adapter::Arguments& args, TcCall what, size_t* bytes, void* workspace,
                         cudaStream_t stream, const char* name) {
    const cutlass::Status can = Adapter::can_implement(args);
    if (can != cutlass::Status::kSuccess)
        return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "%s cannot run this problem: %s", name,
                                 cutlass::cutlassGetStatusString(can));
    if (what == TcCall::check) return core::Status::ok();
    const size_t need = Adapter::get_workspace_size(args);
    if (what == TcCall::workspace) {
        *bytes = need;
        return core::Status::ok();
    }
    Adapter op;
    cutlass::Status s = op.initialize(args, need ? workspace : nullptr, stream);
    if (s == cutlass::Status::kSuccess) s = op.run(stream);
    if (s != cutlass::Status::kSuccess)
        return core::make_status(CUDNN_STATUS_EXECUTION_FAILED, "%s failed: %s", name,
                                 cutlass::cutlassGetStatusString(s));
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return core::make_status(CUDNN_STATUS_EXECUTION_FAILED_CUDART, "%s launch failed: %s", name,
                                 cudaGetErrorString(e));
    return core::Status::ok();
}

}  // namespace odnn::cuda::sm90
