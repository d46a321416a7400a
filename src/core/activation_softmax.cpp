#include "core/activation_softmax.hpp"

#include "core/dtype.hpp"
#include "core/ops.hpp"
#include "core/replay.hpp"

namespace odnn::core {

namespace {

bool is_float_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

Status check_set(const TensorDesc& d, const char* arg) {
    ODNN_REQUIRE_PARAM(d.is_set(), "%s has not been set (call cudnnSetTensor*Descriptor first)", arg);
    return Status::ok();
}

// `b` has `a`'s dims and data type (cuDNN: BAD_PARAM otherwise).
Status check_like(const TensorDesc& a, const char* an, const TensorDesc& b, const char* bn) {
    ODNN_RETURN_IF_ERROR(check_set(b, bn));
    bool same = a.nb_dims == b.nb_dims;
    for (int i = 0; same && i < a.nb_dims; ++i) same = a.dims[i] == b.dims[i];
    ODNN_REQUIRE_PARAM(same, "%s and %s differ in shape", an, bn);
    ODNN_REQUIRE_PARAM(a.dtype == b.dtype, "%s (%s) and %s (%s) must have the same data type", an,
                       dtype_name(a.dtype), bn, dtype_name(b.dtype));
    return Status::ok();
}

Status check_float(const TensorDesc& d, const char* op) {
    ODNN_REQUIRE_SUPPORTED(is_float_type(d.dtype) && d.vect_count == 1,
                           "%s supports FLOAT, DOUBLE, HALF and BFLOAT16 data, not %s", op, dtype_name(d.dtype));
    return Status::ok();
}

// An output may share its buffer with an input only when both are laid out alike.
Status check_in_place(const void* in, const Operand& in_o, const char* in_name, const void* out, const Operand& out_o,
                      const char* out_name) {
    ODNN_REQUIRE_PARAM(in != out || same_layout(in_o, out_o),
                       "%s and %s are the same buffer: in-place operation needs identical descriptors (strides)",
                       in_name, out_name);
    return Status::ok();
}

ActivationParams params_of(const ActivationDesc& d) {
    ActivationParams a;
    a.mode = d.mode;
    a.propagate_nan = d.nan_opt == CUDNN_PROPAGATE_NAN;
    a.coef = d.coef;
    a.swish_beta = d.swish_beta;
    return a;
}

Status check_softmax_enums(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode) {
    ODNN_REQUIRE_PARAM(static_cast<int>(algo) >= CUDNN_SOFTMAX_FAST && static_cast<int>(algo) <= CUDNN_SOFTMAX_LOG,
                       "algo = %d is not a cudnnSoftmaxAlgorithm_t value", static_cast<int>(algo));
    ODNN_REQUIRE_PARAM(
        static_cast<int>(mode) == CUDNN_SOFTMAX_MODE_INSTANCE || static_cast<int>(mode) == CUDNN_SOFTMAX_MODE_CHANNEL,
        "mode = %d is not a cudnnSoftmaxMode_t value", static_cast<int>(mode));
    return Status::ok();
}

}  // namespace

Status activation_forward(const Handle& h, const ActivationDesc& d, const void* alpha, const TensorDesc& x,
                          const void* x_data, const void* beta, const TensorDesc& y, void* y_data) {
    ODNN_RETURN_IF_ERROR(check_set(x, "xDesc"));
    ODNN_RETURN_IF_ERROR(check_like(x, "xDesc", y, "yDesc"));
    ODNN_RETURN_IF_ERROR(check_float(x, "cudnnActivationForward"));
    ActivationFwdProblem p;
    p.act = params_of(d);
    p.x = operand_of(x);
    p.y = operand_of(y);
    ODNN_RETURN_IF_ERROR(check_in_place(x_data, p.x, "x", y_data, p.y, "y"));
    p.x_data = x_data;
    p.y_data = y_data;
    p.scale = read_scale(alpha, beta, y.dtype == CUDNN_DATA_DOUBLE);
    log_replay(h, p);
    return dispatch(h, p);
}

Status activation_backward(const Handle& h, const ActivationDesc& d, const void* alpha, const TensorDesc& y,
                           const void* y_data, const TensorDesc& dy, const void* dy_data, const TensorDesc& x,
                           const void* x_data, const void* beta, const TensorDesc& dx, void* dx_data) {
    ODNN_RETURN_IF_ERROR(check_set(dx, "dxDesc"));
    ODNN_RETURN_IF_ERROR(check_like(dx, "dxDesc", y, "yDesc"));
    ODNN_RETURN_IF_ERROR(check_like(dx, "dxDesc", dy, "dyDesc"));
    ODNN_RETURN_IF_ERROR(check_like(dx, "dxDesc", x, "xDesc"));
    ODNN_RETURN_IF_ERROR(check_float(dx, "cudnnActivationBackward"));
    ActivationBwdProblem p;
    p.act = params_of(d);
    p.y = operand_of(y);
    p.dy = operand_of(dy);
    p.x = operand_of(x);
    p.dx = operand_of(dx);
    ODNN_RETURN_IF_ERROR(check_in_place(dy_data, p.dy, "dy", dx_data, p.dx, "dx"));
    ODNN_RETURN_IF_ERROR(check_in_place(y_data, p.y, "y", dx_data, p.dx, "dx"));
    ODNN_RETURN_IF_ERROR(check_in_place(x_data, p.x, "x", dx_data, p.dx, "dx"));
    p.y_data = y_data;
    p.dy_data = dy_data;
    p.x_data = x_data;
    p.dx_data = dx_data;
    p.scale = read_scale(alpha, beta, dx.dtype == CUDNN_DATA_DOUBLE);
    log_replay(h, p);
    return dispatch(h, p);
}

SoftmaxSplit softmax_split(cudnnSoftmaxMode_t mode, const Operand& x) {
    SoftmaxSplit s;
    for (int d = 0; d < x.nb_dims; ++d) {
        const bool reduced = mode == CUDNN_SOFTMAX_MODE_CHANNEL ? d == 1 : d >= 1;
        if (reduced) {
            s.reduced_mask |= 1u << d;
            s.reduced[s.nb_reduced++] = d;
            s.length *= x.dims[d];
        } else {
            s.kept[s.nb_kept++] = d;
            s.groups *= x.dims[d];
        }
    }
    return s;
}

Status softmax_forward(const Handle& h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void* alpha,
                       const TensorDesc& x, const void* x_data, const void* beta, const TensorDesc& y, void* y_data) {
    ODNN_RETURN_IF_ERROR(check_softmax_enums(algo, mode));
    ODNN_RETURN_IF_ERROR(check_set(x, "xDesc"));
    ODNN_RETURN_IF_ERROR(check_like(x, "xDesc", y, "yDesc"));
    ODNN_RETURN_IF_ERROR(check_float(x, "cudnnSoftmaxForward"));
    SoftmaxFwdProblem p;
    p.algo = algo;
    p.mode = mode;
    p.x = operand_of(x);
    p.y = operand_of(y);
    ODNN_RETURN_IF_ERROR(check_in_place(x_data, p.x, "x", y_data, p.y, "y"));
    p.split = softmax_split(mode, p.x);
    p.x_data = x_data;
    p.y_data = y_data;
    p.scale = read_scale(alpha, beta, y.dtype == CUDNN_DATA_DOUBLE);
    log_replay(h, p);
    return dispatch(h, p);
}

Status softmax_backward(const Handle& h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void* alpha,
                        const TensorDesc& y, const void* y_data, const TensorDesc& dy, const void* dy_data,
                        const void* beta, const TensorDesc& dx, void* dx_data) {
    ODNN_RETURN_IF_ERROR(check_softmax_enums(algo, mode));
    ODNN_RETURN_IF_ERROR(check_set(dx, "dxDesc"));
    ODNN_RETURN_IF_ERROR(check_like(dx, "dxDesc", y, "yDesc"));
    ODNN_RETURN_IF_ERROR(check_like(dx, "dxDesc", dy, "dyDesc"));
    ODNN_RETURN_IF_ERROR(check_float(dx, "cudnnSoftmaxBackward"));
    SoftmaxBwdProblem p;
    p.algo = algo;
    p.mode = mode;
    p.y = operand_of(y);
    p.dy = operand_of(dy);
    p.dx = operand_of(dx);
    ODNN_RETURN_IF_ERROR(check_in_place(dy_data, p.dy, "dy", dx_data, p.dx, "dx"));
    ODNN_RETURN_IF_ERROR(check_in_place(y_data, p.y, "y", dx_data, p.dx, "dx"));
    p.split = softmax_split(mode, p.dx);
    p.y_data = y_data;
    p.dy_data = dy_data;
    p.dx_data = dx_data;
    p.scale = read_scale(alpha, beta, dx.dtype == CUDNN_DATA_DOUBLE);
    log_replay(h, p);
    return dispatch(h, p);
}

}  // namespace odnn::core
