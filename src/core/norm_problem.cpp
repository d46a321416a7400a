#include "core/norm_problem.hpp"

#include <cstring>
#include <string>

#include "core/dtype.hpp"
#include "core/replay.hpp"

namespace odnn::core {

namespace {

bool io_dtype_ok(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

cudnnDataType_t param_dtype_for(cudnnDataType_t x) { return x == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

Status check_mode(int mode) {
    ODNN_REQUIRE_PARAM(mode == CUDNN_BATCHNORM_PER_ACTIVATION || mode == CUDNN_BATCHNORM_SPATIAL ||
                           mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                       "mode = %d is not a batch normalization mode", mode);
    return Status::ok();
}

// x: set, 4-D or 5-D, a data type normalization computes on.
Status check_x(const TensorDesc& x, const char* arg) {
    ODNN_REQUIRE_PARAM(x.is_set(), "%s has not been set", arg);
    ODNN_REQUIRE_PARAM(x.nb_dims == 4 || x.nb_dims == 5,
                       "%s has %d dimensions: normalization takes 4-D and 5-D tensors only", arg, x.nb_dims);
    ODNN_REQUIRE_SUPPORTED(io_dtype_ok(x.dtype), "%s has data type %s: normalization takes FLOAT, DOUBLE, HALF or BFLOAT16",
                           arg, dtype_name(x.dtype));
    return Status::ok();
}

bool same_dims(const TensorDesc& a, const TensorDesc& b) {
    if (a.nb_dims != b.nb_dims) return false;
    for (int i = 0; i < a.nb_dims; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

std::string dims_string(const TensorDesc& d) {
    std::string s;
    for (int i = 0; i < d.nb_dims; ++i) s += (i ? "x" : "") + std::to_string(d.dims[i]);
    return s.empty() ? "(unset)" : s;
}

// A tensor that must look like x (dims and data type).
Status check_like_x(const TensorDesc& t, const char* arg, const TensorDesc& x) {
    ODNN_REQUIRE_PARAM(t.is_set(), "%s has not been set", arg);
    ODNN_REQUIRE_PARAM(same_dims(t, x), "%s has dims %s but xDesc has %s", arg, dims_string(t).c_str(),
                       dims_string(x).c_str());
    ODNN_REQUIRE_SUPPORTED(t.dtype == x.dtype, "%s has data type %s but xDesc has %s: they must be equal", arg,
                           dtype_name(t.dtype), dtype_name(x.dtype));
    return Status::ok();
}

// A scale / bias / mean / variance descriptor: the derived shape and data type.
Status check_param_desc(const TensorDesc& p, const char* arg, const TensorDesc& x, int mode) {
    ODNN_REQUIRE_PARAM(p.is_set(), "%s has not been set", arg);
    TensorDesc want;
    ODNN_RETURN_IF_ERROR(derive_bn_desc(want, x, mode));
    ODNN_REQUIRE_PARAM(same_dims(p, want), "%s has dims %s; for xDesc %s and this mode it must be %s", arg,
                       dims_string(p).c_str(), dims_string(x).c_str(), dims_string(want).c_str());
    ODNN_REQUIRE_PARAM(p.dtype == want.dtype, "%s has data type %s; for xDesc of type %s it must be %s", arg,
                       dtype_name(p.dtype), dtype_name(x.dtype), dtype_name(want.dtype));
    return Status::ok();
}

Status fill_common(NormCommon& k, const NormRequest& r, const TensorDesc& x, double epsilon) {
    ODNN_RETURN_IF_ERROR(check_mode(r.mode));
    ODNN_REQUIRE_PARAM(r.ops >= 0 && r.ops <= 2, "bnOps = %d is not a cudnnBatchNormOps_t value", r.ops);
    ODNN_RETURN_IF_ERROR(check_x(x, "xDesc"));
    ODNN_REQUIRE_PARAM(epsilon >= CUDNN_BN_MIN_EPSILON, "epsilon = %g is below CUDNN_BN_MIN_EPSILON (%g)", epsilon,
                       CUDNN_BN_MIN_EPSILON);
    NormCommon c;
    c.ops = static_cast<NormOps>(r.ops);
    if (c.ops != NormOps::norm) {
        ODNN_REQUIRE_PARAM(r.act != nullptr, "activationDesc is NULL but bnOps = %d fuses an activation", r.ops);
        const int m = static_cast<int>(r.act->mode);
        ODNN_REQUIRE_SUPPORTED(m == CUDNN_ACTIVATION_RELU || m == CUDNN_ACTIVATION_CLIPPED_RELU ||
                                   m == CUDNN_ACTIVATION_SIGMOID || m == CUDNN_ACTIVATION_TANH ||
                                   m == CUDNN_ACTIVATION_ELU || m == CUDNN_ACTIVATION_IDENTITY,
                               "activation mode %d cannot be fused into normalization (RELU, CLIPPED_RELU, SIGMOID, "
                               "TANH, ELU and IDENTITY can)",
                               m);
        c.act.mode = m;
        c.act.propagate_nan = r.act->nan_opt == CUDNN_PROPAGATE_NAN;
        c.act.coef = r.act->coef;
    }
    c.dtype = x.dtype;
    c.param_dtype = param_dtype_for(x.dtype);
    c.epsilon = epsilon;
    NormGeometry& g = c.g;
    g.per_channel = r.mode != CUDNN_BATCHNORM_PER_ACTIVATION;
    g.n = x.dims[0];
    g.c = x.dims[1];
    g.nb_spatial = x.nb_dims - 2;
    g.s = 1;
    for (int i = 0; i < g.nb_spatial; ++i) {
        g.sdims[i] = x.dims[i + 2];
        g.s *= x.dims[i + 2];
    }
    k = c;
    return Status::ok();
}

Status require_ptr(const void* p, const char* arg) {
    ODNN_REQUIRE_PARAM(p != nullptr, "%s is NULL", arg);
    return Status::ok();
}

Status both_or_neither(const void* a, const void* b, const char* an, const char* bn) {
    ODNN_REQUIRE_PARAM((a == nullptr) == (b == nullptr), "%s and %s must be both NULL or both non-NULL", an, bn);
    return Status::ok();
}

template <class P>
StatusOr<size_t> workspace_of(const Handle& h, const P& p) {
    auto impl = ImplRegistry<P>::get().select(h.backend, p);
    if (!impl.is_ok()) return impl.status();
    return impl.value()->workspace_size(p);
}

// Dispatch, holding a caller's workspace to the size the chosen implementation needs.
template <class P>
Status run(const Handle& h, const P& p) {
    auto impl = ImplRegistry<P>::get().select(h.backend, p);
    if (!impl.is_ok()) return impl.status();
    if (p.caller_workspace) {
        const size_t need = impl.value()->workspace_size(p);
        ODNN_REQUIRE_PARAM(p.workspace_bytes >= need,
                           "workSpaceSizeInBytes = %zu is less than the %zu bytes the workspace size query gives",
                           p.workspace_bytes, need);
        ODNN_REQUIRE_PARAM(need == 0 || p.workspace != nullptr, "workspace is NULL but %zu bytes are needed", need);
    }
    return impl.value()->execute(h, p);
}

Status validate_fwd_training(const NormRequest& r, BnFwdTrainingProblem& p, double epsilon) {
    ODNN_RETURN_IF_ERROR(fill_common(p.k, r, p.x, epsilon));
    ODNN_RETURN_IF_ERROR(check_like_x(p.y, "yDesc", p.x));
    if (p.k.ops == NormOps::add_act) ODNN_RETURN_IF_ERROR(check_like_x(p.z, "zDesc", p.x));
    ODNN_RETURN_IF_ERROR(check_param_desc(p.scale_bias, "bnScaleBiasMeanVarDesc", p.x, r.mode));
    ODNN_RETURN_IF_ERROR(check_param_desc(p.mean_var, "mean / variance descriptor", p.x, r.mode));
    if (r.query) return Status::ok();
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.y_data, "y"));
    if (p.k.ops == NormOps::add_act) ODNN_RETURN_IF_ERROR(require_ptr(p.z_data, "z"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.scale, "bnScale"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.bias, "bnBias"));
    ODNN_RETURN_IF_ERROR(both_or_neither(p.running_mean, p.running_var, "resultRunningMean", "resultRunningVariance"));
    ODNN_RETURN_IF_ERROR(both_or_neither(p.save_mean, p.save_inv_var, "resultSaveMean", "resultSaveInvVariance"));
    return Status::ok();
}

Status validate_backward(const NormRequest& r, BnBackwardProblem& p, double epsilon) {
    ODNN_RETURN_IF_ERROR(fill_common(p.k, r, p.x, epsilon));
    ODNN_RETURN_IF_ERROR(check_like_x(p.dy, "dyDesc", p.x));
    ODNN_RETURN_IF_ERROR(check_like_x(p.dx, "dxDesc", p.x));
    if (p.k.ops != NormOps::norm) ODNN_RETURN_IF_ERROR(check_like_x(p.y, "yDesc", p.x));
    if (p.k.ops == NormOps::add_act) ODNN_RETURN_IF_ERROR(check_like_x(p.dz, "dzDesc", p.x));
    ODNN_RETURN_IF_ERROR(check_param_desc(p.scale_bias, "dBnScaleBiasDesc", p.x, r.mode));
    ODNN_RETURN_IF_ERROR(check_param_desc(p.mean_var, "mean / variance descriptor", p.x, r.mode));
    if (r.query) return Status::ok();
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.dy_data, "dy"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.dx_data, "dx"));
    if (p.k.ops != NormOps::norm) ODNN_RETURN_IF_ERROR(require_ptr(p.y_data, "y (needed by the fused activation's backward)"));
    if (p.k.ops == NormOps::add_act) ODNN_RETURN_IF_ERROR(require_ptr(p.dz_data, "dz"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.scale, "bnScale"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.dscale, "dBnScaleResult"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.dbias, "dBnBiasResult"));
    ODNN_RETURN_IF_ERROR(both_or_neither(p.saved_mean, p.saved_inv_var, "savedMean", "savedInvVariance"));
    return Status::ok();
}

}  // namespace

Status derive_bn_desc(TensorDesc& out, const TensorDesc& x, int mode) {
    ODNN_RETURN_IF_ERROR(check_mode(mode));
    ODNN_RETURN_IF_ERROR(check_x(x, "xDesc"));
    int dims[kDimMax];
    int strides[kDimMax];
    dims[0] = 1;
    dims[1] = static_cast<int>(x.dims[1]);
    for (int i = 2; i < x.nb_dims; ++i) dims[i] = mode == CUDNN_BATCHNORM_PER_ACTIVATION ? static_cast<int>(x.dims[i]) : 1;
    int64_t s = 1;
    for (int i = x.nb_dims - 1; i >= 0; --i) {
        strides[i] = static_cast<int>(s);
        s *= dims[i];
    }
    TensorDesc t;
    ODNN_RETURN_IF_ERROR(set_tensor_nd(t, param_dtype_for(x.dtype), x.nb_dims, dims, strides));
    out = t;
    return Status::ok();
}

Status derive_norm_descs(TensorDesc* scale_bias, TensorDesc* mean_var, const TensorDesc& x, int mode, int group_cnt) {
    ODNN_REQUIRE_PARAM(mode == CUDNN_NORM_PER_ACTIVATION || mode == CUDNN_NORM_PER_CHANNEL,
                       "mode = %d is not a cudnnNormMode_t value", mode);
    ODNN_REQUIRE_SUPPORTED(group_cnt == 1, "groupCnt = %d: only 1 is supported", group_cnt);
    TensorDesc t;
    ODNN_RETURN_IF_ERROR(derive_bn_desc(
        t, x, mode == CUDNN_NORM_PER_ACTIVATION ? CUDNN_BATCHNORM_PER_ACTIVATION : CUDNN_BATCHNORM_SPATIAL));
    *scale_bias = t;
    *mean_var = t;
    return Status::ok();
}

Status batch_norm_forward_inference(const Handle& h, const NormRequest& r, BnFwdInferenceProblem& p) {
    ODNN_RETURN_IF_ERROR(fill_common(p.k, r, p.x, p.k.epsilon));
    ODNN_RETURN_IF_ERROR(check_like_x(p.y, "yDesc", p.x));
    if (p.k.ops == NormOps::add_act) ODNN_RETURN_IF_ERROR(check_like_x(p.z, "zDesc", p.x));
    ODNN_RETURN_IF_ERROR(check_param_desc(p.scale_bias, "bnScaleBiasMeanVarDesc", p.x, r.mode));
    ODNN_RETURN_IF_ERROR(check_param_desc(p.mean_var, "mean / variance descriptor", p.x, r.mode));
    ODNN_RETURN_IF_ERROR(require_ptr(p.x_data, "x"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.y_data, "y"));
    if (p.k.ops == NormOps::add_act) ODNN_RETURN_IF_ERROR(require_ptr(p.z_data, "z"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.scale, "bnScale"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.bias, "bnBias"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.mean, "estimatedMean"));
    ODNN_RETURN_IF_ERROR(require_ptr(p.var, "estimatedVariance"));
    log_replay(h, p, r);
    return dispatch(h, p);
}

Status batch_norm_forward_training(const Handle& h, const NormRequest& r, BnFwdTrainingProblem& p) {
    ODNN_RETURN_IF_ERROR(validate_fwd_training(r, p, p.k.epsilon));
    log_replay(h, p, r);
    return run(h, p);
}

Status batch_norm_backward(const Handle& h, const NormRequest& r, BnBackwardProblem& p) {
    ODNN_RETURN_IF_ERROR(validate_backward(r, p, p.k.epsilon));
    log_replay(h, p, r);
    return run(h, p);
}

StatusOr<size_t> batch_norm_forward_training_workspace(const Handle& h, const NormRequest& r,
                                                       BnFwdTrainingProblem& p) {
    NormRequest q = r;
    q.query = true;
    p.k.epsilon = 0.0;  // not given to the query; any valid value
    ODNN_RETURN_IF_ERROR(validate_fwd_training(q, p, 0.0));
    p.caller_workspace = true;
    return workspace_of(h, p);
}

StatusOr<size_t> batch_norm_backward_workspace(const Handle& h, const NormRequest& r, BnBackwardProblem& p) {
    NormRequest q = r;
    q.query = true;
    p.k.epsilon = 0.0;
    ODNN_RETURN_IF_ERROR(validate_backward(q, p, 0.0));
    p.caller_workspace = true;
    return workspace_of(h, p);
}

StatusOr<size_t> batch_norm_reserve_space(const Handle&, const NormRequest& r, const TensorDesc& x) {
    NormCommon k;
    ODNN_RETURN_IF_ERROR(fill_common(k, r, x, 0.0));
    return size_t{0};
}

}  // namespace odnn::core
