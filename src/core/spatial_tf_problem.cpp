#include "core/spatial_tf_problem.hpp"

#include "core/dtype.hpp"

namespace odnn::core {

namespace {

Status check_st(const SpatialTransformerDesc& st) {
    ODNN_REQUIRE_PARAM(st.is_set(), "stDesc has not been set");
    ODNN_REQUIRE_SUPPORTED(st.nb_dims == 4, "stDesc has %d dimensions: only 4-D (N, C, H, W) transforms are supported",
                           st.nb_dims);
    return Status::ok();
}

bool float_dtype(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

}  // namespace

Status spatial_tf_grid(const Handle& h, const SpatialTransformerDesc& st, SpatialTfGridProblem& p) {
    ODNN_RETURN_IF_ERROR(check_st(st));
    ODNN_REQUIRE_PARAM(p.in != nullptr, "%s is NULL", p.backward ? "dgrid" : "theta");
    ODNN_REQUIRE_PARAM(p.out != nullptr, "%s is NULL", p.backward ? "dtheta" : "grid");
    p.n = st.dims[0];
    p.h = st.dims[2];
    p.w = st.dims[3];
    p.dtype = st.dtype;
    return dispatch(h, p);
}

Status spatial_tf_sampler(const Handle& h, const SpatialTransformerDesc& st, SpatialTfSamplerProblem& p) {
    ODNN_RETURN_IF_ERROR(check_st(st));
    const char* yn = p.backward ? "dyDesc" : "yDesc";
    ODNN_REQUIRE_PARAM(p.x.is_set(), "xDesc has not been set");
    ODNN_REQUIRE_PARAM(p.y.is_set(), "%s has not been set", yn);
    ODNN_REQUIRE_SUPPORTED(p.x.nb_dims == 4 && p.y.nb_dims == 4, "the sampler takes 4-D tensors (xDesc %d-D, %s %d-D)",
                           p.x.nb_dims, yn, p.y.nb_dims);
    for (int i = 0; i < 4; ++i)
        ODNN_REQUIRE_PARAM(p.y.dims[i] == st.dims[i], "%s dim %d is %lld but stDesc gives %d", yn, i,
                           static_cast<long long>(p.y.dims[i]), st.dims[i]);
    ODNN_REQUIRE_PARAM(p.x.dims[0] == p.y.dims[0] && p.x.dims[1] == p.y.dims[1],
                       "xDesc and %s differ in N or C", yn);
    ODNN_REQUIRE_SUPPORTED(float_dtype(p.x.dtype), "the sampler does not support data type %s", dtype_name(p.x.dtype));
    ODNN_REQUIRE_PARAM(p.y.dtype == p.x.dtype, "%s has data type %s but xDesc has %s", yn, dtype_name(p.y.dtype),
                       dtype_name(p.x.dtype));
    ODNN_REQUIRE_PARAM(p.x_data != nullptr, "x is NULL");
    ODNN_REQUIRE_PARAM(p.grid != nullptr, "grid is NULL");
    if (p.backward) {
        ODNN_REQUIRE_PARAM(p.dx.is_set(), "dxDesc has not been set");
        bool same = p.dx.nb_dims == 4;
        for (int i = 0; same && i < 4; ++i) same = p.dx.dims[i] == p.x.dims[i];
        ODNN_REQUIRE_PARAM(same, "dxDesc and xDesc have different dims");
        ODNN_REQUIRE_PARAM(p.dx.dtype == p.x.dtype, "dxDesc has data type %s but xDesc has %s", dtype_name(p.dx.dtype),
                           dtype_name(p.x.dtype));
        ODNN_REQUIRE_PARAM(p.dy_data != nullptr, "dy is NULL");
        ODNN_REQUIRE_PARAM(p.dx_data != nullptr, "dx is NULL");
        ODNN_REQUIRE_PARAM(p.dgrid != nullptr, "dgrid is NULL");
    } else {
        ODNN_REQUIRE_PARAM(p.y_data != nullptr, "y is NULL");
    }
    p.grid_dtype = st.dtype;
    return dispatch(h, p);
}

}  // namespace odnn::core
