// cudnn_cnn entry points of the convolution family: forward (plain and fused with bias
// and activation), backward data / filter / bias, algorithm queries and searches,
// workspace sizes, im2col, the INT8x32 filter reorder. Each checks its arguments, builds
// a core::ConvProblem and hands it to the core, which dispatches to the handle's backend.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "api/api_common.hpp"
#include "core/conv_desc.hpp"
#include "core/conv_fold.hpp"
#include "core/conv_problem.hpp"
#include "core/handle.hpp"
#include "core/memory.hpp"
#include "core/tensor_ops.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

using odnn::api::guard;
using odnn::core::ConvAlgoPerf;
using odnn::core::ConvKind;
using odnn::core::ConvProblem;
using odnn::core::Status;

namespace {

// The descriptors of one direction, looked up and turned into a problem.
Status build(ConvKind kind, cudnnTensorDescriptor_t xDesc, cudnnFilterDescriptor_t wDesc,
             cudnnConvolutionDescriptor_t convDesc, cudnnTensorDescriptor_t yDesc, ConvProblem* p) {
    const char* xarg = kind == ConvKind::bwd_data ? "dxDesc" : "xDesc";
    const char* warg = kind == ConvKind::bwd_filter ? "dwDesc" : "wDesc";
    const char* yarg = kind == ConvKind::fwd ? "yDesc" : "dyDesc";
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(xDesc, odnn::core::ObjKind::tensor, xarg));
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(wDesc, odnn::core::ObjKind::filter, warg));
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(convDesc, odnn::core::ObjKind::convolution, "convDesc"));
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(yDesc, odnn::core::ObjKind::tensor, yarg));
    return odnn::core::make_conv_problem(kind, *xDesc, *wDesc, *convDesc, *yDesc, p);
}

// Alpha and beta follow the data type of the computation's output (double for DOUBLE).
Status scalars(ConvProblem* p, const void* alpha, const void* beta) {
    ODNN_REQUIRE_PARAM(alpha != nullptr, "alpha is NULL");
    ODNN_REQUIRE_PARAM(beta != nullptr, "beta is NULL");
    p->alpha = odnn::core::decode_scalar(alpha, p->x.dtype);
    p->beta = odnn::core::decode_scalar(beta, p->x.dtype);
    return Status::ok();
}

template <class Perf, class Algo>
void copy_perf(const std::vector<ConvAlgoPerf>& v, int n, Perf* out) {
    for (int i = 0; i < n; ++i) {
        Perf r{};
        r.algo = static_cast<Algo>(v[static_cast<size_t>(i)].algo);
        r.status = v[static_cast<size_t>(i)].status;
        r.time = v[static_cast<size_t>(i)].time_ms;
        r.memory = v[static_cast<size_t>(i)].memory;
        r.determinism = v[static_cast<size_t>(i)].determinism;
        r.mathType = v[static_cast<size_t>(i)].math;
        out[i] = r;
    }
}

Status check_request(int requested, const int* returned, const void* perf) {
    ODNN_REQUIRE_PARAM(requested >= 0, "requestedAlgoCount = %d is negative", requested);
    ODNN_REQUIRE_PARAM(returned != nullptr, "returnedAlgoCount is NULL");
    ODNN_REQUIRE_PARAM(perf != nullptr, "perfResults is NULL");
    return Status::ok();
}

template <class Perf, class Algo>
Status get_v7(const odnn::core::Handle& h, const ConvProblem& p, int requested, int* returned, Perf* perf) {
    const int count = odnn::core::conv_algo_count(p.kind);
    std::vector<ConvAlgoPerf> v(static_cast<size_t>(count));
    odnn::core::conv_get_algorithms(h, p, v.data(), count);
    const int n = requested < count ? requested : count;
    copy_perf<Perf, Algo>(v, n, perf);
    *returned = n;
    return Status::ok();
}

template <class Perf, class Algo>
Status find(const odnn::core::Handle& h, const ConvProblem& p, size_t limit, int requested, int* returned,
            Perf* perf) {
    *returned = 0;
    if (requested == 0) return Status::ok();  // nothing asked: nothing run
    const int count = odnn::core::conv_algo_count(p.kind);
    std::vector<ConvAlgoPerf> v(static_cast<size_t>(count));
    ODNN_RETURN_IF_ERROR(odnn::core::conv_find_algorithms(h, p, limit, v.data(), count));
    const int n = requested < count ? requested : count;
    copy_perf<Perf, Algo>(v, n, perf);
    *returned = n;
    return Status::ok();
}

// Buffers of the handle's backend for the Find calls that take no data (zero-filled).
class FindBuffers {
public:
    Status allocate(const odnn::core::Handle& h, ConvProblem* p) {
        ODNN_RETURN_IF_ERROR(alloc(h, p->x, &p->x_data));
        ODNN_RETURN_IF_ERROR(alloc(h, p->w, &p->w_data));
        ODNN_RETURN_IF_ERROR(alloc(h, p->y, &p->y_data));
        p->alpha = 1.0;
        p->beta = 0.0;
        return Status::ok();
    }

private:
    Status alloc(const odnn::core::Handle& h, const odnn::core::ConvTensor& t, void** data) {
        const size_t bytes = static_cast<size_t>(t.span()) * 8 + 64;  // 8 bytes covers every element type
        bufs_.emplace_back(new odnn::core::BackendBuffer());
        ODNN_RETURN_IF_ERROR(bufs_.back()->allocate(h, bytes));
        *data = bufs_.back()->get();
        return Status::ok();
    }
    std::vector<std::unique_ptr<odnn::core::BackendBuffer>> bufs_;
};

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------
// Forward

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_REQUIRE_NOT_NULL(count);
        *count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc, const cudnnFilterDescriptor_t filterDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::fwd, srcDesc, filterDesc, convDesc, destDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        return get_v7<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(*h, p, requestedAlgoCount,
                                                                                 returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle,
                                                               const cudnnTensorDescriptor_t xDesc,
                                                               const cudnnFilterDescriptor_t wDesc,
                                                               const cudnnConvolutionDescriptor_t convDesc,
                                                               const cudnnTensorDescriptor_t yDesc,
                                                               const int requestedAlgoCount, int* returnedAlgoCount,
                                                               cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::fwd, xDesc, wDesc, convDesc, yDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        FindBuffers bufs;
        ODNN_RETURN_IF_ERROR(bufs.allocate(*h, &p));
        return find<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
            *h, p, std::numeric_limits<size_t>::max(), requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnFilterDescriptor_t wDesc,
    const void* w, const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, void* y,
    const int requestedAlgoCount, int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults,
    void* workSpace, size_t workSpaceSizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::fwd, xDesc, wDesc, convDesc, yDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        ODNN_REQUIRE_PARAM(x && w && y, "x, w and y must not be NULL");
        ODNN_REQUIRE_PARAM(workSpace != nullptr || workSpaceSizeInBytes == 0,
                           "workSpace is NULL but workSpaceSizeInBytes = %zu", workSpaceSizeInBytes);
        p.x_data = const_cast<void*>(x);
        p.w_data = const_cast<void*>(w);
        p.y_data = y;
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return find<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
            *h, p, workSpaceSizeInBytes, requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle,
                                                                  const cudnnTensorDescriptor_t xDesc,
                                                                  const cudnnFilterDescriptor_t wDesc,
                                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                                  const cudnnTensorDescriptor_t yDesc,
                                                                  cudnnConvolutionFwdAlgo_t algo,
                                                                  size_t* sizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::fwd, xDesc, wDesc, convDesc, yDesc, &p));
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        p.algo = static_cast<int>(algo);
        auto ws = odnn::core::conv_workspace_size(*h, p);
        if (!ws.is_ok()) return ws.status();
        *sizeInBytes = ws.value();
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                                  const cudnnTensorDescriptor_t xDesc, const void* x,
                                                  const cudnnFilterDescriptor_t wDesc, const void* w,
                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                  cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                                  size_t workSpaceSizeInBytes, const void* beta,
                                                  const cudnnTensorDescriptor_t yDesc, void* y) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::fwd, xDesc, wDesc, convDesc, yDesc, &p));
        ODNN_REQUIRE_PARAM(x && w && y, "x, w and y must not be NULL");
        ODNN_RETURN_IF_ERROR(scalars(&p, alpha, beta));
        p.algo = static_cast<int>(algo);
        p.x_data = const_cast<void*>(x);
        p.w_data = const_cast<void*>(w);
        p.y_data = y;
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return odnn::core::conv_execute(*h, p);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void* alpha1, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* alpha2,
    const cudnnTensorDescriptor_t zDesc, const void* z, const cudnnTensorDescriptor_t biasDesc, const void* bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void* y) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::fwd, xDesc, wDesc, convDesc, yDesc, &p));
        ODNN_LOOKUP(zd, zDesc, tensor);
        ODNN_LOOKUP(bd, biasDesc, tensor);
        ODNN_LOOKUP(act, activationDesc, activation);
        ODNN_REQUIRE_PARAM(x && w && y && z && bias, "x, w, z, bias and y must not be NULL");
        ODNN_REQUIRE_PARAM(alpha1 != nullptr, "alpha1 is NULL");
        ODNN_REQUIRE_PARAM(alpha2 != nullptr, "alpha2 is NULL");
        p.algo = static_cast<int>(algo);
        p.alpha = odnn::core::decode_scalar(alpha1, p.x.dtype);
        p.beta = 0.0;
        ODNN_RETURN_IF_ERROR(odnn::core::set_conv_epilogue(&p, *yDesc, *zd, z,
                                                           odnn::core::decode_scalar(alpha2, p.x.dtype), *bd, bias,
                                                           act->mode, act->nan_opt));
        p.x_data = const_cast<void*>(x);
        p.w_data = const_cast<void*>(w);
        p.y_data = y;
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return odnn::core::conv_execute(*h, p);
    }, handle);
}

// ---------------------------------------------------------------------------
// Backward data

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_REQUIRE_NOT_NULL(count);
        *count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_data, gradDesc, filterDesc, convDesc, diffDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        return get_v7<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
            *h, p, requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_data, dxDesc, wDesc, convDesc, dyDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        FindBuffers bufs;
        ODNN_RETURN_IF_ERROR(bufs.allocate(*h, &p));
        return find<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
            *h, p, std::numeric_limits<size_t>::max(), requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnTensorDescriptor_t dyDesc,
    const void* dy, const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const int requestedAlgoCount, int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults,
    void* workSpace, size_t workSpaceSizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_data, dxDesc, wDesc, convDesc, dyDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        ODNN_REQUIRE_PARAM(w && dy && dx, "w, dy and dx must not be NULL");
        ODNN_REQUIRE_PARAM(workSpace != nullptr || workSpaceSizeInBytes == 0,
                           "workSpace is NULL but workSpaceSizeInBytes = %zu", workSpaceSizeInBytes);
        p.x_data = dx;
        p.w_data = const_cast<void*>(w);
        p.y_data = const_cast<void*>(dy);
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return find<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
            *h, p, workSpaceSizeInBytes, requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle,
                                                                       const cudnnFilterDescriptor_t wDesc,
                                                                       const cudnnTensorDescriptor_t dyDesc,
                                                                       const cudnnConvolutionDescriptor_t convDesc,
                                                                       const cudnnTensorDescriptor_t dxDesc,
                                                                       cudnnConvolutionBwdDataAlgo_t algo,
                                                                       size_t* sizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_data, dxDesc, wDesc, convDesc, dyDesc, &p));
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        p.algo = static_cast<int>(algo);
        auto ws = odnn::core::conv_workspace_size(*h, p);
        if (!ws.is_ok()) return ws.status();
        *sizeInBytes = ws.value();
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                                       const cudnnFilterDescriptor_t wDesc, const void* w,
                                                       const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                                       const cudnnConvolutionDescriptor_t convDesc,
                                                       cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                                                       size_t workSpaceSizeInBytes, const void* beta,
                                                       const cudnnTensorDescriptor_t dxDesc, void* dx) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_data, dxDesc, wDesc, convDesc, dyDesc, &p));
        ODNN_REQUIRE_PARAM(w && dy && dx, "w, dy and dx must not be NULL");
        ODNN_RETURN_IF_ERROR(scalars(&p, alpha, beta));
        p.algo = static_cast<int>(algo);
        p.x_data = dx;
        p.w_data = const_cast<void*>(w);
        p.y_data = const_cast<void*>(dy);
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return odnn::core::conv_execute(*h, p);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetFoldedConvBackwardDataDescriptors(
    const cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc,
    const cudnnTensorFormat_t transformFormat, cudnnFilterDescriptor_t foldedFilterDesc,
    cudnnTensorDescriptor_t paddedDiffDesc, cudnnConvolutionDescriptor_t foldedConvDesc,
    cudnnTensorDescriptor_t foldedGradDesc, cudnnTensorTransformDescriptor_t filterFoldTransDesc,
    cudnnTensorTransformDescriptor_t diffPadTransDesc, cudnnTensorTransformDescriptor_t gradFoldTransDesc,
    cudnnTensorTransformDescriptor_t gradUnfoldTransDesc) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_LOOKUP(w, filterDesc, filter);
        ODNN_LOOKUP(dy, diffDesc, tensor);
        ODNN_LOOKUP(conv, convDesc, convolution);
        ODNN_LOOKUP(dx, gradDesc, tensor);
        ODNN_LOOKUP(folded_w, foldedFilterDesc, filter);
        ODNN_LOOKUP(padded_dy, paddedDiffDesc, tensor);
        ODNN_LOOKUP(folded_conv, foldedConvDesc, convolution);
        ODNN_LOOKUP(folded_dx, foldedGradDesc, tensor);
        ODNN_LOOKUP(w_fold, filterFoldTransDesc, tensor_transform);
        ODNN_LOOKUP(dy_pad, diffPadTransDesc, tensor_transform);
        ODNN_LOOKUP(dx_fold, gradFoldTransDesc, tensor_transform);
        ODNN_LOOKUP(dx_unfold, gradUnfoldTransDesc, tensor_transform);
        odnn::core::FoldedBwdData f;
        ODNN_RETURN_IF_ERROR(odnn::core::fold_conv_bwd_data(*w, *dy, *conv, *dx, transformFormat, &f));
        // Written only after everything succeeded (outputs may alias inputs).
        static_cast<odnn::core::FilterDesc&>(*folded_w) = f.folded_filter;
        static_cast<odnn::core::TensorDesc&>(*padded_dy) = f.padded_diff;
        static_cast<odnn::core::ConvDesc&>(*folded_conv) = f.folded_conv;
        static_cast<odnn::core::TensorDesc&>(*folded_dx) = f.folded_grad;
        static_cast<odnn::core::TensorTransformDesc&>(*w_fold) = f.filter_fold;
        static_cast<odnn::core::TensorTransformDesc&>(*dy_pad) = f.diff_pad;
        static_cast<odnn::core::TensorTransformDesc&>(*dx_fold) = f.grad_fold;
        static_cast<odnn::core::TensorTransformDesc&>(*dx_unfold) = f.grad_unfold;
        return Status::ok();
    }, handle);
}

// ---------------------------------------------------------------------------
// Backward filter and bias

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        (void)h;
        ODNN_REQUIRE_NOT_NULL(count);
        *count = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_filter, srcDesc, gradDesc, convDesc, diffDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        return get_v7<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
            *h, p, requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_filter, xDesc, dwDesc, convDesc, dyDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        FindBuffers bufs;
        ODNN_RETURN_IF_ERROR(bufs.allocate(*h, &p));
        return find<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
            *h, p, std::numeric_limits<size_t>::max(), requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc,
    const void* y, const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, void* dw,
    const int requestedAlgoCount, int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults,
    void* workSpace, size_t workSpaceSizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_filter, xDesc, dwDesc, convDesc, dyDesc, &p));
        ODNN_RETURN_IF_ERROR(check_request(requestedAlgoCount, returnedAlgoCount, perfResults));
        ODNN_REQUIRE_PARAM(x && y && dw, "x, dy and dw must not be NULL");
        ODNN_REQUIRE_PARAM(workSpace != nullptr || workSpaceSizeInBytes == 0,
                           "workSpace is NULL but workSpaceSizeInBytes = %zu", workSpaceSizeInBytes);
        p.x_data = const_cast<void*>(x);
        p.w_data = dw;
        p.y_data = const_cast<void*>(y);
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return find<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
            *h, p, workSpaceSizeInBytes, requestedAlgoCount, returnedAlgoCount, perfResults);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle,
                                                                         const cudnnTensorDescriptor_t xDesc,
                                                                         const cudnnTensorDescriptor_t dyDesc,
                                                                         const cudnnConvolutionDescriptor_t convDesc,
                                                                         const cudnnFilterDescriptor_t gradDesc,
                                                                         cudnnConvolutionBwdFilterAlgo_t algo,
                                                                         size_t* sizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_filter, xDesc, gradDesc, convDesc, dyDesc, &p));
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        p.algo = static_cast<int>(algo);
        auto ws = odnn::core::conv_workspace_size(*h, p);
        if (!ws.is_ok()) return ws.status();
        *sizeInBytes = ws.value();
        return Status::ok();
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                                         const cudnnTensorDescriptor_t xDesc, const void* x,
                                                         const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                                         const cudnnConvolutionDescriptor_t convDesc,
                                                         cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
                                                         size_t workSpaceSizeInBytes, const void* beta,
                                                         const cudnnFilterDescriptor_t dwDesc, void* dw) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ConvProblem p;
        ODNN_RETURN_IF_ERROR(build(ConvKind::bwd_filter, xDesc, dwDesc, convDesc, dyDesc, &p));
        ODNN_REQUIRE_PARAM(x && dy && dw, "x, dy and dw must not be NULL");
        ODNN_RETURN_IF_ERROR(scalars(&p, alpha, beta));
        p.algo = static_cast<int>(algo);
        p.x_data = const_cast<void*>(x);
        p.w_data = dw;
        p.y_data = const_cast<void*>(dy);
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        return odnn::core::conv_execute(*h, p);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                                       const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                                       const void* beta, const cudnnTensorDescriptor_t dbDesc,
                                                       void* db) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(dyd, dyDesc, tensor);
        ODNN_LOOKUP(dbd, dbDesc, tensor);
        odnn::core::ConvBiasGradProblem p;
        ODNN_RETURN_IF_ERROR(odnn::core::make_bias_grad_problem(*dyd, *dbd, &p));
        ODNN_REQUIRE_PARAM(dy && db, "dy and db must not be NULL");
        ODNN_REQUIRE_PARAM(alpha && beta, "alpha and beta must not be NULL");
        p.dy_data = dy;
        p.db_data = db;
        p.alpha = odnn::core::decode_scalar(alpha, dyd->dtype);
        p.beta = odnn::core::decode_scalar(beta, dyd->dtype);
        return odnn::core::dispatch(*h, p);
    }, handle);
}

// ---------------------------------------------------------------------------
// im2col

cudnnStatus_t CUDNNWINAPI cudnnIm2Col(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
                                      const cudnnFilterDescriptor_t wDesc,
                                      const cudnnConvolutionDescriptor_t convDesc, void* colBuffer) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(xd, xDesc, tensor);
        ODNN_LOOKUP(wd, wDesc, filter);
        ODNN_LOOKUP(cd, convDesc, convolution);
        ODNN_REQUIRE_PARAM(x && colBuffer, "x and colBuffer must not be NULL");
        ODNN_REQUIRE_PARAM(xd->is_set() && wd->is_set() && cd->is_set(),
                           "xDesc, wDesc and convDesc must have been set");
        // The output tensor is implied: build it from the output dims.
        ODNN_REQUIRE_PARAM(xd->nb_dims == wd->nb_dims, "xDesc has %d dims but wDesc has %d", xd->nb_dims,
                           wd->nb_dims);
        int out[odnn::core::kDimMax];
        ODNN_RETURN_IF_ERROR(odnn::core::conv_forward_output_dims(*cd, *xd, *wd, xd->nb_dims, out));
        odnn::core::TensorDesc yd;
        std::vector<int> ystrides(static_cast<size_t>(xd->nb_dims));
        int s = 1;
        for (int i = xd->nb_dims - 1; i >= 0; --i) {
            ystrides[static_cast<size_t>(i)] = s;
            s *= out[i];
        }
        ODNN_RETURN_IF_ERROR(odnn::core::set_tensor_nd(yd, xd->dtype, xd->nb_dims, out, ystrides.data()));
        odnn::core::Im2ColProblem q;
        ODNN_RETURN_IF_ERROR(odnn::core::make_conv_problem(ConvKind::fwd, *xd, *wd, *cd, yd, &q.conv));
        q.conv.x_data = const_cast<void*>(x);
        q.col = colBuffer;
        return odnn::core::dispatch(*h, q);
    }, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnReorderFilterAndBias(cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
                                                    cudnnReorderType_t reorderType, const void* filterData,
                                                    void* reorderedFilterData, int reorderBias, const void* biasData,
                                                    void* reorderedBiasData) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(h, handle, handle);
        ODNN_LOOKUP(w, filterDesc, filter);
        return odnn::core::reorder_filter_and_bias(*h, *w, reorderType, filterData, reorderedFilterData, reorderBias,
                                                   biasData, reorderedBiasData);
    }, handle);
}

}  // extern "C"
