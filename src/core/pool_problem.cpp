#include "core/pool_problem.hpp"

#include <string>

#include "core/dtype.hpp"
#include "core/replay.hpp"

namespace odnn::core {

namespace {

bool float_dtype(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

std::string dims_string(const TensorDesc& d) {
    std::string s;
    for (int i = 0; i < d.nb_dims; ++i) s += (i ? "x" : "") + std::to_string(d.dims[i]);
    return s.empty() ? "(unset)" : s;
}

bool same_dims(const TensorDesc& a, const TensorDesc& b) {
    if (a.nb_dims != b.nb_dims) return false;
    for (int i = 0; i < a.nb_dims; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

Status require_set(const TensorDesc& t, const char* arg) {
    ODNN_REQUIRE_PARAM(t.is_set(), "%s has not been set", arg);
    return Status::ok();
}

Status require_ptr(const void* p, const char* arg) {
    ODNN_REQUIRE_PARAM(p != nullptr, "%s is NULL", arg);
    return Status::ok();
}

// Pooling geometry from the descriptor, x and y; y's spatial size is free.
Status make_geometry(PoolGeom& g, const PoolingDesc& pool, const TensorDesc& x, const TensorDesc& y, const char* xn,
                     const char* yn) {
    ODNN_REQUIRE_PARAM(pool.is_set(), "poolingDesc has not been set");
    ODNN_RETURN_IF_ERROR(require_set(x, xn));
    ODNN_RETURN_IF_ERROR(require_set(y, yn));
    ODNN_REQUIRE_PARAM(x.nb_dims == pool.nb_dims + 2,
                       "%s has %d dimensions; a %d-D pooling needs %d (N, C and the spatial dims)", xn, x.nb_dims,
                       pool.nb_dims, pool.nb_dims + 2);
    ODNN_REQUIRE_PARAM(y.nb_dims == x.nb_dims, "%s has %d dimensions but %s has %d", yn, y.nb_dims, xn, x.nb_dims);
    ODNN_REQUIRE_PARAM(x.dims[0] == y.dims[0] && x.dims[1] == y.dims[1],
                       "N and C of %s (%s) and %s (%s) differ", xn, dims_string(x).c_str(), yn, dims_string(y).c_str());
    ODNN_REQUIRE_PARAM(x.dtype == y.dtype, "%s has data type %s but %s has %s", xn, dtype_name(x.dtype), yn,
                       dtype_name(y.dtype));
    PoolGeom t;
    t.nsp = pool.nb_dims;
    t.mode = static_cast<int>(pool.mode);
    t.propagate_nan = pool.nan_opt == CUDNN_PROPAGATE_NAN;
    t.n = x.dims[0];
    t.c = x.dims[1];
    for (int d = 0; d < t.nsp; ++d) {
        t.in[d] = x.dims[d + 2];
        t.out[d] = y.dims[d + 2];
        t.win[d] = pool.windows[d];
        t.pad[d] = pool.pads[d];
        t.stride[d] = pool.strides[d];
    }
    g = t;
    return Status::ok();
}

}  // namespace

Status pooling_forward(const Handle& h, const PoolingDesc& pool, PoolingFwdProblem& p) {
    ODNN_RETURN_IF_ERROR(make_geometry(p.g, pool, p.x, p.y, "xDesc", "yDesc"));
    ODNN_REQUIRE_SUPPORTED(float_dtype(p.x.dtype) || p.x.dtype == CUDNN_DATA_INT8,
                           "pooling does not support data type %s", dtype_name(p.x.dtype));
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.y_data, "y"));
    log_replay(h, p);
    return dispatch(h, p);
}

Status pooling_backward(const Handle& h, const PoolingDesc& pool, PoolingBwdProblem& p) {
    ODNN_RETURN_IF_ERROR(make_geometry(p.g, pool, p.x, p.y, "xDesc", "yDesc"));
    ODNN_RETURN_IF_ERROR(require_set(p.dy, "dyDesc"));
    ODNN_RETURN_IF_ERROR(require_set(p.dx, "dxDesc"));
    ODNN_REQUIRE_PARAM(same_dims(p.dy, p.y), "dyDesc has dims %s but yDesc has %s", dims_string(p.dy).c_str(),
                       dims_string(p.y).c_str());
    ODNN_REQUIRE_PARAM(same_dims(p.dx, p.x), "dxDesc has dims %s but xDesc has %s", dims_string(p.dx).c_str(),
                       dims_string(p.x).c_str());
    ODNN_REQUIRE_PARAM(p.dy.dtype == p.x.dtype && p.dx.dtype == p.x.dtype,
                       "dyDesc (%s), dxDesc (%s) and xDesc (%s) must have one data type", dtype_name(p.dy.dtype),
                       dtype_name(p.dx.dtype), dtype_name(p.x.dtype));
    ODNN_REQUIRE_SUPPORTED(float_dtype(p.x.dtype), "pooling backward does not support data type %s",
                           dtype_name(p.x.dtype));
    ODNN_RETURN_IF_ERROR(require_ptr(p.y_data, "y"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.dy_data, "dy"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.dx_data, "dx"));
    log_replay(h, p);
    return dispatch(h, p);
}

Status lrn_cross_channel(const Handle& h, LrnProblem& p) {
    const TensorDesc& in = p.x;
    const TensorDesc& out = p.backward ? p.dx : p.y;
    ODNN_RETURN_IF_ERROR(require_set(in, "xDesc"));
    ODNN_RETURN_IF_ERROR(require_set(out, p.backward ? "dxDesc" : "yDesc"));
    ODNN_REQUIRE_PARAM(in.nb_dims >= 3, "xDesc has %d dimensions: LRN needs at least 3", in.nb_dims);
    ODNN_REQUIRE_SUPPORTED(float_dtype(in.dtype), "LRN does not support data type %s", dtype_name(in.dtype));
    const TensorDesc* others[] = {&p.y, &p.dy, &p.dx};
    const char* names[] = {"yDesc", "dyDesc", "dxDesc"};
    for (int i = 0; i < 3; ++i) {
        if (!p.backward && i > 0) break;
        ODNN_RETURN_IF_ERROR(require_set(*others[i], names[i]));
        ODNN_REQUIRE_SUPPORTED(others[i]->dtype == in.dtype, "%s has data type %s but xDesc has %s", names[i],
                               dtype_name(others[i]->dtype), dtype_name(in.dtype));
        ODNN_REQUIRE_SUPPORTED(same_dims(*others[i], in), "%s has dims %s but xDesc has %s", names[i],
                               dims_string(*others[i]).c_str(), dims_string(in).c_str());
    }
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    if (p.backward) {
        ODNN_RETURN_IF_ERROR(require_ptr(p.y_data, "y"));
        ODNN_RETURN_IF_ERROR(require_ptr(p.dy_data, "dy"));
    }
    ODNN_RETURN_IF_ERROR(require_ptr(p.out_data, p.backward ? "dx" : "y"));
    log_replay(h, p);
    return dispatch(h, p);
}

Status divisive_normalization(const Handle& h, DivNormProblem& p) {
    ODNN_RETURN_IF_ERROR(require_set(p.x, "xDesc"));
    const char* on = p.backward ? "dXdMeansDesc" : "yDesc";
    ODNN_RETURN_IF_ERROR(require_set(p.out, on));
    ODNN_REQUIRE_PARAM(p.x.nb_dims == 4 || p.x.nb_dims == 5,
                       "xDesc has %d dimensions: divisive normalization takes 4-D and 5-D tensors", p.x.nb_dims);
    ODNN_REQUIRE_PARAM(same_dims(p.x, p.out), "%s has dims %s but xDesc has %s", on, dims_string(p.out).c_str(),
                       dims_string(p.x).c_str());
    ODNN_REQUIRE_SUPPORTED(float_dtype(p.x.dtype), "divisive normalization does not support data type %s",
                           dtype_name(p.x.dtype));
    ODNN_REQUIRE_SUPPORTED(p.out.dtype == p.x.dtype, "%s has data type %s but xDesc has %s", on,
                           dtype_name(p.out.dtype), dtype_name(p.x.dtype));
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    if (p.backward) ODNN_RETURN_IF_ERROR(require_ptr(p.dy_data, "dy"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.out_data, p.backward ? "dx" : "y"));
    return dispatch(h, p);
}

}  // namespace odnn::core
