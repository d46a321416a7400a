// cudnn_ops entry points for pooling, cross-channel LRN and divisive normalization.
// Arguments are looked up here; the rules live in core/pool_problem.
#include "api/api_common.hpp"
#include "core/handle.hpp"
#include "core/ops.hpp"
#include "core/ops_desc.hpp"
#include "core/pool_problem.hpp"
#include "core/tensor_desc.hpp"

using odnn::api::guard;
using odnn::core::ObjKind;
using odnn::core::Status;
using odnn::core::TensorDesc;

namespace {

Status tensor_arg(cudnnTensorDescriptor_t d, const char* arg, TensorDesc* out) {
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(d, ObjKind::tensor, arg));
    *out = *d;
    return Status::ok();
}

Status scale_arg(const void* alpha, const void* beta, const TensorDesc& t, odnn::core::Scale* out) {
    ODNN_REQUIRE_PARAM(alpha != nullptr, "alpha is NULL");
    ODNN_REQUIRE_PARAM(beta != nullptr, "beta is NULL");
    *out = odnn::core::read_scale(alpha, beta, t.dtype == CUDNN_DATA_DOUBLE);
    return Status::ok();
}

template <class Fn>
cudnnStatus_t with_handle(const char* api, cudnnHandle_t handle, Fn&& fn) {
    return guard(
        api,
        [&]() -> Status {
            ODNN_LOOKUP(h, handle, handle);
            return fn(*h);
        },
        handle);
}

}  // namespace

extern "C" {

cudnnStatus_t CUDNNWINAPI cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                              const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x,
                                              const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(pool, poolingDesc, pooling);
        odnn::core::PoolingFwdProblem p;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, p.y, &p.out));
        p.x_data = x;
        p.y_data = y;
        return odnn::core::pooling_forward(h, *pool, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                               const void* alpha, const cudnnTensorDescriptor_t yDesc, const void* y,
                                               const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                               const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
                                               const cudnnTensorDescriptor_t dxDesc, void* dx) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(pool, poolingDesc, pooling);
        odnn::core::PoolingBwdProblem p;
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, p.dx, &p.out));
        p.y_data = y;
        p.dy_data = dy;
        p.x_data = x;
        p.dx_data = dx;
        return odnn::core::pooling_backward(h, *pool, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                      cudnnLRNMode_t lrnMode, const void* alpha,
                                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                                      const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(lrn, normDesc, lrn);
        ODNN_REQUIRE_PARAM(lrnMode == CUDNN_LRN_CROSS_CHANNEL_DIM1, "lrnMode = %d is not CUDNN_LRN_CROSS_CHANNEL_DIM1",
                           static_cast<int>(lrnMode));
        odnn::core::LrnProblem p;
        p.lrn = *lrn;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, p.y, &p.out));
        p.x_data = x;
        p.out_data = y;
        return odnn::core::lrn_cross_channel(h, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                       cudnnLRNMode_t lrnMode, const void* alpha,
                                                       const cudnnTensorDescriptor_t yDesc, const void* y,
                                                       const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                                       const cudnnTensorDescriptor_t xDesc, const void* x,
                                                       const void* beta, const cudnnTensorDescriptor_t dxDesc,
                                                       void* dx) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(lrn, normDesc, lrn);
        ODNN_REQUIRE_PARAM(lrnMode == CUDNN_LRN_CROSS_CHANNEL_DIM1, "lrnMode = %d is not CUDNN_LRN_CROSS_CHANNEL_DIM1",
                           static_cast<int>(lrnMode));
        odnn::core::LrnProblem p;
        p.backward = true;
        p.lrn = *lrn;
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, p.dx, &p.out));
        p.x_data = x;
        p.y_data = y;
        p.dy_data = dy;
        p.out_data = dx;
        return odnn::core::lrn_cross_channel(h, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnDivisiveNormalizationForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                            cudnnDivNormMode_t mode, const void* alpha,
                                                            const cudnnTensorDescriptor_t xDesc, const void* x,
                                                            const void* means, void* temp, void* temp2,
                                                            const void* beta, const cudnnTensorDescriptor_t yDesc,
                                                            void* y) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(lrn, normDesc, lrn);
        ODNN_REQUIRE_PARAM(mode == CUDNN_DIVNORM_PRECOMPUTED_MEANS, "mode = %d is not CUDNN_DIVNORM_PRECOMPUTED_MEANS",
                           static_cast<int>(mode));
        // temp and temp2 are part of the contract (odnn's kernels do not need them).
        ODNN_REQUIRE_PARAM(temp != nullptr && temp2 != nullptr, "temp and temp2 must not be NULL");
        odnn::core::DivNormProblem p;
        p.lrn = *lrn;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.out));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, p.out, &p.out_scale));
        p.x_data = x;
        p.means = means;
        p.out_data = y;
        return odnn::core::divisive_normalization(h, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnDivisiveNormalizationBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                             cudnnDivNormMode_t mode, const void* alpha,
                                                             const cudnnTensorDescriptor_t xDesc, const void* x,
                                                             const void* means, const void* dy, void* temp,
                                                             void* temp2, const void* beta,
                                                             const cudnnTensorDescriptor_t dXdMeansDesc, void* dx,
                                                             void* dMeans) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(lrn, normDesc, lrn);
        ODNN_REQUIRE_PARAM(mode == CUDNN_DIVNORM_PRECOMPUTED_MEANS, "mode = %d is not CUDNN_DIVNORM_PRECOMPUTED_MEANS",
                           static_cast<int>(mode));
        ODNN_REQUIRE_PARAM(temp != nullptr && temp2 != nullptr, "temp and temp2 must not be NULL");
        odnn::core::DivNormProblem p;
        p.backward = true;
        p.lrn = *lrn;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(dXdMeansDesc, "dXdMeansDesc", &p.out));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, p.out, &p.out_scale));
        p.x_data = x;
        p.means = means;
        p.dy_data = dy;
        p.out_data = dx;
        p.dmeans = dMeans;
        return odnn::core::divisive_normalization(h, p);
    });
}

}  // extern "C"
