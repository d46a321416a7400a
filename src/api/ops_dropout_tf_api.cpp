// cudnn_ops entry points for dropout (forward, backward) and the spatial transformer
// (grid generator and sampler, forward and backward). Rules in core/dropout_problem
// and core/spatial_tf_problem.
#include "api/api_common.hpp"
#include "core/dropout_problem.hpp"
#include "core/handle.hpp"
#include "core/ops.hpp"
#include "core/ops_desc.hpp"
#include "core/spatial_tf_problem.hpp"
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

Status scale_arg(const void* alpha, const void* beta, const char* an, const char* bn, const TensorDesc& t,
                 odnn::core::Scale* out) {
    ODNN_REQUIRE_PARAM(alpha != nullptr, "%s is NULL", an);
    ODNN_REQUIRE_PARAM(beta != nullptr, "%s is NULL", bn);
    *out = odnn::core::read_scale(alpha, beta, t.dtype == CUDNN_DATA_DOUBLE);
    return Status::ok();
}

Status run_dropout(const odnn::core::Handle& h, cudnnDropoutDescriptor_t dropoutDesc, bool backward,
                   cudnnTensorDescriptor_t in_desc, const void* in, cudnnTensorDescriptor_t out_desc, void* out,
                   void* reserve, size_t reserve_bytes) {
    ODNN_LOOKUP(d, dropoutDesc, dropout);
    odnn::core::DropoutProblem p;
    p.backward = backward;
    ODNN_RETURN_IF_ERROR(tensor_arg(in_desc, backward ? "dydesc" : "xdesc", &p.x));
    ODNN_RETURN_IF_ERROR(tensor_arg(out_desc, backward ? "dxdesc" : "ydesc", &p.y));
    p.x_data = in;
    p.y_data = out;
    p.reserve = static_cast<uint32_t*>(reserve);
    return odnn::core::dropout(h, *d, p, reserve_bytes);
}

}  // namespace

extern "C" {

cudnnStatus_t CUDNNWINAPI cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropoutDesc,
                                              const cudnnTensorDescriptor_t xdesc, const void* x,
                                              const cudnnTensorDescriptor_t ydesc, void* y, void* reserveSpace,
                                              size_t reserveSpaceSizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) {
        return run_dropout(h, dropoutDesc, false, xdesc, x, ydesc, y, reserveSpace, reserveSpaceSizeInBytes);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropoutDesc,
                                               const cudnnTensorDescriptor_t dydesc, const void* dy,
                                               const cudnnTensorDescriptor_t dxdesc, void* dx, void* reserveSpace,
                                               size_t reserveSpaceSizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) {
        return run_dropout(h, dropoutDesc, true, dydesc, dy, dxdesc, dx, reserveSpace, reserveSpaceSizeInBytes);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfGridGeneratorForward(cudnnHandle_t handle,
                                                             const cudnnSpatialTransformerDescriptor_t stDesc,
                                                             const void* theta, void* grid) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(st, stDesc, spatial_transformer);
        odnn::core::SpatialTfGridProblem p;
        p.in = theta;
        p.out = grid;
        return odnn::core::spatial_tf_grid(h, *st, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t handle,
                                                              const cudnnSpatialTransformerDescriptor_t stDesc,
                                                              const void* dgrid, void* dtheta) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(st, stDesc, spatial_transformer);
        odnn::core::SpatialTfGridProblem p;
        p.backward = true;
        p.in = dgrid;
        p.out = dtheta;
        return odnn::core::spatial_tf_grid(h, *st, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfSamplerForward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
                                                       const void* alpha, const cudnnTensorDescriptor_t xDesc,
                                                       const void* x, const void* grid, const void* beta,
                                                       cudnnTensorDescriptor_t yDesc, void* y) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(st, stDesc, spatial_transformer);
        odnn::core::SpatialTfSamplerProblem p;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, "alpha", "beta", p.x, &p.out));
        p.x_data = x;
        p.grid = grid;
        p.y_data = y;
        return odnn::core::spatial_tf_sampler(h, *st, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfSamplerBackward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
                                                        const void* alpha, const cudnnTensorDescriptor_t xDesc,
                                                        const void* x, const void* beta,
                                                        const cudnnTensorDescriptor_t dxDesc, void* dx,
                                                        const void* alphaDgrid, const cudnnTensorDescriptor_t dyDesc,
                                                        const void* dy, const void* grid, const void* betaDgrid,
                                                        void* dgrid) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_LOOKUP(st, stDesc, spatial_transformer);
        odnn::core::SpatialTfSamplerProblem p;
        p.backward = true;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.y));
        ODNN_RETURN_IF_ERROR(scale_arg(alpha, beta, "alpha", "beta", p.x, &p.out));
        ODNN_RETURN_IF_ERROR(scale_arg(alphaDgrid, betaDgrid, "alphaDgrid", "betaDgrid", p.x, &p.grid_out));
        p.x_data = x;
        p.dx_data = dx;
        p.dy_data = dy;
        p.grid = grid;
        p.dgrid = dgrid;
        return odnn::core::spatial_tf_sampler(h, *st, p);
    });
}

}  // extern "C"
