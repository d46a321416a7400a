// Batch normalization (cudnnBatchNormalization*) and the generic normalization family
// (cudnnNormalization*): the problems both backends run, their geometry, and the
// rules that build them from the API's descriptors.
//
// A "feature" keeps one mean and one variance. SPATIAL (and SPATIAL_PERSISTENT, which
// is only a performance hint in cuDNN and computes the same thing here) normalises each
// channel over N and every spatial position: features = C, count M = N * spatial.
// PER_ACTIVATION normalises each (channel, spatial position) over N: features =
// C * spatial, M = N. The generic family's PER_CHANNEL / PER_ACTIVATION are the same two.
//
// Semantics (both backends):
//   forward training   mean = sum(x) / M, var = sum((x - mean)^2) / M (biased),
//                      y = alpha * act(scale * (x - mean) / sqrt(var + eps) + bias [+ z]) + beta * y,
//                      running_mean = (1 - f) * running_mean + f * mean,
//                      running_var  = (1 - f) * running_var  + f * var * M / (M - 1)  (unbiased; M = 1: var),
//                      save_mean = mean, save_inv_var = 1 / sqrt(var + eps)
//   forward inference  as above with the given estimated mean and variance
//   backward           dy' = dy * act'(y) (y is the forward output; act' computed from it),
//                      dz = alpha_d * dy' + beta_d * dz (BN_ADD_ACTIVATION),
//                      dbias = sum(dy'), dscale = sum(dy' * xhat),
//                      dx = alpha_d * scale * inv_std * (dy' - dbias / M - xhat * dscale / M) + beta_d * dx,
//                      dscale/dbias outputs blended with alpha_p / beta_p,
//                      mean and inv_std from save_mean / save_inv_var, or recomputed from x when both are NULL.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/blend.hpp"
#include "core/handle.hpp"
#include "core/impl_registry.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

struct NormGeometry {
    bool per_channel = true;  // SPATIAL / PER_CHANNEL; false: PER_ACTIVATION
    int nb_spatial = 0;
    int64_t n = 0, c = 0, s = 1;  // batch, channels, product of the spatial dims
    int64_t sdims[kDimMax] = {};  // the spatial dims

    ODNN_HD int64_t features() const { return per_channel ? c : c * s; }
    ODNN_HD int64_t count() const { return per_channel ? n * s : n; }

    // Offset of spatial position `sp` (row-major over sdims) with the strides st[2..].
    // Unrolled over every possible dimension, so that sdims and st are indexed by constants
    // only: indexed by a run-time d, a kernel copied its whole geometry (and strides) to
    // local memory at entry in every thread, even where this path never ran (ODNN_UNROLL).
    ODNN_HD int64_t spatial_offset(int64_t sp, const int64_t* st) const {
        int64_t off = 0;
        ODNN_UNROLL
        for (int d = kDimMax - 3; d >= 0; --d) {
            if (d >= nb_spatial) continue;
            off += (sp % sdims[d]) * st[d + 2];
            sp /= sdims[d];
        }
        return off;
    }
    // Offset of the m-th element of feature f in a tensor with strides st (dims N, C, spatial...).
    ODNN_HD int64_t offset(const int64_t* st, int64_t m, int64_t f) const {
        if (per_channel) {
            const int64_t nn = m / s;
            return nn * st[0] + f * st[1] + spatial_offset(m - nn * s, st);
        }
        const int64_t cc = f / s;
        return m * st[0] + cc * st[1] + spatial_offset(f - cc * s, st);
    }
    // Offset of feature f in a scale / bias / mean / variance tensor (1 x C x 1.. or 1 x C x spatial),
    // or of feature f's first element in a data tensor: offset(st, 0, f), without its divisions
    // where the feature is a channel (kernels finishing a channel call it in their inner loops).
    ODNN_HD int64_t param_offset(const int64_t* st, int64_t f) const {
        return per_channel ? f * st[1] : offset(st, 0, f);
    }
};

// What the Ex calls fuse after the normalization (cudnnBatchNormOps_t / cudnnNormOps_t values).
enum class NormOps : int { norm = 0, act = 1, add_act = 2 };

// The fused activation, as kernels apply it (see core/norm_math.hpp).
struct NormActivation {
    int mode = 5;  // CUDNN_ACTIVATION_IDENTITY
    bool propagate_nan = false;
    double coef = 0.0;
};

// The parts every normalization call shares.
struct NormCommon {
    NormGeometry g;
    NormOps ops = NormOps::norm;
    NormActivation act;
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;        // x, y, z, dy, dx
    cudnnDataType_t param_dtype = CUDNN_DATA_FLOAT;  // scale, bias, means, variances
    double epsilon = 0.0;
};

struct BnFwdInferenceProblem {
    static constexpr const char* kOpName = "batch normalization forward inference";
    NormCommon k;
    TensorDesc x, y, z, scale_bias, mean_var;  // z only with NormOps::add_act
    const void* x_data = nullptr;
    const void* z_data = nullptr;
    void* y_data = nullptr;
    const void* scale = nullptr;
    const void* bias = nullptr;
    const void* mean = nullptr;
    const void* var = nullptr;
    Scale out;
};

struct BnFwdTrainingProblem {
    static constexpr const char* kOpName = "batch normalization forward training";
    NormCommon k;
    TensorDesc x, y, z, scale_bias, mean_var;
    const void* x_data = nullptr;
    const void* z_data = nullptr;
    void* y_data = nullptr;
    const void* scale = nullptr;
    const void* bias = nullptr;
    double factor = 1.0;
    void* running_mean = nullptr;  // both or neither
    void* running_var = nullptr;
    void* save_mean = nullptr;  // both or neither
    void* save_inv_var = nullptr;
    Scale out;
    // The caller's workspace (Ex calls). Without one (caller_workspace false) an
    // implementation that needs scratch memory finds its own.
    bool caller_workspace = false;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
};

struct BnBackwardProblem {
    static constexpr const char* kOpName = "batch normalization backward";
    NormCommon k;
    TensorDesc x, y, dy, dz, dx, scale_bias, mean_var;  // y with an activation, dz with add_act
    const void* x_data = nullptr;
    const void* y_data = nullptr;
    const void* dy_data = nullptr;
    void* dz_data = nullptr;
    void* dx_data = nullptr;
    const void* scale = nullptr;
    void* dscale = nullptr;
    void* dbias = nullptr;
    const void* saved_mean = nullptr;  // both or neither
    const void* saved_inv_var = nullptr;
    Scale data, param;
    bool caller_workspace = false;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
};

// ---- Descriptor derivation ----

// cudnnDeriveBNTensorDescriptor: 1 x C x 1 x 1 (x 1) for SPATIAL modes, 1 x C x spatial
// for PER_ACTIVATION; FLOAT for FLOAT / HALF / BFLOAT16 x, DOUBLE for DOUBLE x; packed NCHW.
Status derive_bn_desc(TensorDesc& out, const TensorDesc& x, int mode);
// cudnnDeriveNormTensorDescriptor (groupCnt must be 1): both outputs as above.
Status derive_norm_descs(TensorDesc* scale_bias, TensorDesc* mean_var, const TensorDesc& x, int mode, int group_cnt);

// ---- Building and running ----
//
// The API layer copies the descriptors it was given into the problem (an absent
// descriptor stays unset) together with the data pointers, and sets the mode. These
// validate everything, fill in the geometry, and dispatch. `mode` is a
// cudnnBatchNormMode_t; the generic family passes its cudnnNormMode_t mapped to one
// (PER_ACTIVATION -> PER_ACTIVATION, PER_CHANNEL -> SPATIAL). `query` skips the data
// pointer checks (workspace size queries have descriptors only).

struct NormRequest {
    int mode = 1;  // cudnnBatchNormMode_t
    int ops = 0;   // cudnnBatchNormOps_t / cudnnNormOps_t
    const ActivationDesc* act = nullptr;
    bool query = false;
};

Status batch_norm_forward_inference(const Handle& h, const NormRequest& r, BnFwdInferenceProblem& p);
Status batch_norm_forward_training(const Handle& h, const NormRequest& r, BnFwdTrainingProblem& p);
Status batch_norm_backward(const Handle& h, const NormRequest& r, BnBackwardProblem& p);

StatusOr<size_t> batch_norm_forward_training_workspace(const Handle& h, const NormRequest& r, BnFwdTrainingProblem& p);
StatusOr<size_t> batch_norm_backward_workspace(const Handle& h, const NormRequest& r, BnBackwardProblem& p);
// Reserve space: odnn's backward recomputes what it needs from x and y, so none.
StatusOr<size_t> batch_norm_reserve_space(const Handle& h, const NormRequest& r, const TensorDesc& x);

}  // namespace odnn::core
