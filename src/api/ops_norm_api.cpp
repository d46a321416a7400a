// cudnn_ops entry points for batch normalization (cudnnBatchNormalization*,
// cudnnDeriveBNTensorDescriptor) and the generic normalization family
// (cudnnNormalization*, cudnnDeriveNormTensorDescriptor). Arguments are looked up
// here; the rules live in core/norm_problem.
#include "api/api_common.hpp"
#include "core/handle.hpp"
#include "core/norm_problem.hpp"
#include "core/ops.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

using odnn::api::guard;
using odnn::core::ObjKind;
using odnn::core::Status;
using odnn::core::TensorDesc;

namespace {

// A descriptor the call needs: looked up and copied.
Status tensor_arg(cudnnTensorDescriptor_t d, const char* arg, TensorDesc* out) {
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(d, ObjKind::tensor, arg));
    *out = *d;
    return Status::ok();
}

Status optional_activation(cudnnActivationDescriptor_t d, const odnn::core::ActivationDesc** out) {
    *out = nullptr;
    if (d == nullptr) return Status::ok();
    ODNN_RETURN_IF_ERROR(odnn::api::check_object(d, ObjKind::activation, "activationDesc"));
    *out = d;
    return Status::ok();
}

Status read_scale(const void* alpha, const void* beta, const char* an, const char* bn, const TensorDesc& x,
                  odnn::core::Scale* out) {
    ODNN_REQUIRE_PARAM(alpha != nullptr, "%s is NULL", an);
    ODNN_REQUIRE_PARAM(beta != nullptr, "%s is NULL", bn);
    *out = odnn::core::read_scale(alpha, beta, x.dtype == CUDNN_DATA_DOUBLE);
    return Status::ok();
}

int norm_mode_to_bn(cudnnNormMode_t mode) {
    switch (static_cast<int>(mode)) {
        case CUDNN_NORM_PER_ACTIVATION: return CUDNN_BATCHNORM_PER_ACTIVATION;
        case CUDNN_NORM_PER_CHANNEL: return CUDNN_BATCHNORM_SPATIAL;
        default: return -1;  // rejected by the core as "not a mode"
    }
}

Status check_norm_args(cudnnNormMode_t mode, cudnnNormAlgo_t algo, int group_cnt) {
    ODNN_REQUIRE_PARAM(mode == CUDNN_NORM_PER_ACTIVATION || mode == CUDNN_NORM_PER_CHANNEL,
                       "mode = %d is not a cudnnNormMode_t value", static_cast<int>(mode));
    ODNN_REQUIRE_PARAM(algo == CUDNN_NORM_ALGO_STANDARD || algo == CUDNN_NORM_ALGO_PERSIST,
                       "algo = %d is not a cudnnNormAlgo_t value", static_cast<int>(algo));
    ODNN_REQUIRE_SUPPORTED(group_cnt == 1, "groupCnt = %d: only 1 is supported", group_cnt);
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

// ---- Batch normalization ----

cudnnStatus_t CUDNNWINAPI cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc,
                                                        const cudnnTensorDescriptor_t xDesc, cudnnBatchNormMode_t mode) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(out, derivedBnDesc, tensor);
        ODNN_LOOKUP(x, xDesc, tensor);
        TensorDesc t;
        ODNN_RETURN_IF_ERROR(odnn::core::derive_bn_desc(t, *x, static_cast<int>(mode)));
        static_cast<TensorDesc&>(*out) = t;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc, void* y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale, const void* bnBias,
    const void* estimatedMean, const void* estimatedVariance, double epsilon) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        odnn::core::BnFwdInferenceProblem p;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(bnScaleBiasMeanVarDesc, "bnScaleBiasMeanVarDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(read_scale(alpha, beta, "alpha", "beta", p.x, &p.out));
        p.x_data = x;
        p.y_data = y;
        p.scale = bnScale;
        p.bias = bnBias;
        p.mean = estimatedMean;
        p.var = estimatedVariance;
        p.k.epsilon = epsilon;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        return odnn::core::batch_norm_forward_inference(h, r, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const cudnnActivationDescriptor_t activationDesc,
    size_t* sizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        odnn::core::BnFwdTrainingProblem p;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        r.ops = static_cast<int>(bnOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        if (r.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(zDesc, "zDesc", &p.z));
        ODNN_RETURN_IF_ERROR(tensor_arg(bnScaleBiasMeanVarDesc, "bnScaleBiasMeanVarDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        auto size = odnn::core::batch_norm_forward_training_workspace(h, r, p);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t* sizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        odnn::core::BnBackwardProblem p;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        r.ops = static_cast<int>(bnOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        if (r.ops != CUDNN_BATCHNORM_OPS_BN) ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        if (r.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(dzDesc, "dzDesc", &p.dz));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(tensor_arg(dBnScaleBiasDesc, "dBnScaleBiasDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        auto size = odnn::core::batch_norm_backward_workspace(h, r, p);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t xDesc, size_t* sizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        r.ops = static_cast<int>(bnOps);
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        TensorDesc x;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &x));
        auto size = odnn::core::batch_norm_reserve_space(h, r, x);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc, void* y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale, const void* bnBias,
    double exponentialAverageFactor, void* resultRunningMean, void* resultRunningVariance, double epsilon,
    void* resultSaveMean, void* resultSaveInvVariance) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        odnn::core::BnFwdTrainingProblem p;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(bnScaleBiasMeanVarDesc, "bnScaleBiasMeanVarDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(read_scale(alpha, beta, "alpha", "beta", p.x, &p.out));
        p.x_data = x;
        p.y_data = y;
        p.scale = bnScale;
        p.bias = bnBias;
        p.factor = exponentialAverageFactor;
        p.running_mean = resultRunningMean;
        p.running_var = resultRunningVariance;
        p.save_mean = resultSaveMean;
        p.save_inv_var = resultSaveInvVariance;
        p.k.epsilon = epsilon;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        return odnn::core::batch_norm_forward_training(h, r, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* xData, const cudnnTensorDescriptor_t zDesc, const void* zData,
    const cudnnTensorDescriptor_t yDesc, void* yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
    const void* bnScale, const void* bnBias, double exponentialAverageFactor, void* resultRunningMean,
    void* resultRunningVariance, double epsilon, void* resultSaveMean, void* resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, void* workspace, size_t workSpaceSizeInBytes, void* reserveSpace,
    size_t reserveSpaceSizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        odnn::core::BnFwdTrainingProblem p;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        r.ops = static_cast<int>(bnOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        if (r.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(zDesc, "zDesc", &p.z));
        ODNN_RETURN_IF_ERROR(tensor_arg(bnScaleBiasMeanVarDesc, "bnScaleBiasMeanVarDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        ODNN_RETURN_IF_ERROR(read_scale(alpha, beta, "alpha", "beta", p.x, &p.out));
        p.x_data = xData;
        p.z_data = zData;
        p.y_data = yData;
        p.scale = bnScale;
        p.bias = bnBias;
        p.factor = exponentialAverageFactor;
        p.running_mean = resultRunningMean;
        p.running_var = resultRunningVariance;
        p.save_mean = resultSaveMean;
        p.save_inv_var = resultSaveInvVariance;
        p.k.epsilon = epsilon;
        p.caller_workspace = true;
        p.workspace = workspace;
        p.workspace_bytes = workSpaceSizeInBytes;
        (void)reserveSpace;  // odnn needs no reserve space (its size query answers 0)
        (void)reserveSpaceSizeInBytes;
        return odnn::core::batch_norm_forward_training(h, r, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alphaDataDiff, const void* betaDataDiff,
    const void* alphaParamDiff, const void* betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* dy, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScale, void* dBnScaleResult, void* dBnBiasResult,
    double epsilon, const void* savedMean, const void* savedInvVariance) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        odnn::core::BnBackwardProblem p;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(tensor_arg(dBnScaleBiasDesc, "dBnScaleBiasDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(read_scale(alphaDataDiff, betaDataDiff, "alphaDataDiff", "betaDataDiff", p.x, &p.data));
        ODNN_RETURN_IF_ERROR(
            read_scale(alphaParamDiff, betaParamDiff, "alphaParamDiff", "betaParamDiff", p.x, &p.param));
        p.x_data = x;
        p.dy_data = dy;
        p.dx_data = dx;
        p.scale = bnScale;
        p.dscale = dBnScaleResult;
        p.dbias = dBnBiasResult;
        p.saved_mean = savedMean;
        p.saved_inv_var = savedInvVariance;
        p.k.epsilon = epsilon;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        return odnn::core::batch_norm_backward(h, r, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void* alphaDataDiff,
    const void* betaDataDiff, const void* alphaParamDiff, const void* betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void* xData, const cudnnTensorDescriptor_t yDesc, const void* yData,
    const cudnnTensorDescriptor_t dyDesc, const void* dyData, const cudnnTensorDescriptor_t dzDesc, void* dzData,
    const cudnnTensorDescriptor_t dxDesc, void* dxData, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const void* bnScaleData, const void* bnBiasData, void* dBnScaleData, void* dBnBiasData, double epsilon,
    const void* savedMean, const void* savedInvVariance, cudnnActivationDescriptor_t activationDesc, void* workSpace,
    size_t workSpaceSizeInBytes, void* reserveSpace, size_t reserveSpaceSizeInBytes) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        odnn::core::BnBackwardProblem p;
        odnn::core::NormRequest r;
        r.mode = static_cast<int>(mode);
        r.ops = static_cast<int>(bnOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        if (r.ops != CUDNN_BATCHNORM_OPS_BN) ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        if (r.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(dzDesc, "dzDesc", &p.dz));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(tensor_arg(dBnScaleBiasDesc, "dBnScaleBiasDesc", &p.scale_bias));
        p.mean_var = p.scale_bias;
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        ODNN_RETURN_IF_ERROR(read_scale(alphaDataDiff, betaDataDiff, "alphaDataDiff", "betaDataDiff", p.x, &p.data));
        ODNN_RETURN_IF_ERROR(
            read_scale(alphaParamDiff, betaParamDiff, "alphaParamDiff", "betaParamDiff", p.x, &p.param));
        p.x_data = xData;
        p.y_data = yData;
        p.dy_data = dyData;
        p.dz_data = dzData;
        p.dx_data = dxData;
        p.scale = bnScaleData;
        (void)bnBiasData;  // the backward pass does not need the bias (PyTorch passes NULL)
        p.dscale = dBnScaleData;
        p.dbias = dBnBiasData;
        p.saved_mean = savedMean;
        p.saved_inv_var = savedInvVariance;
        p.k.epsilon = epsilon;
        p.caller_workspace = true;
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        (void)reserveSpace;
        (void)reserveSpaceSizeInBytes;
        return odnn::core::batch_norm_backward(h, r, p);
    });
}

// ---- Generic normalization (groupCnt 1; PER_CHANNEL is batch normalization's SPATIAL) ----

cudnnStatus_t CUDNNWINAPI cudnnDeriveNormTensorDescriptor(cudnnTensorDescriptor_t derivedNormScaleBiasDesc,
                                                          cudnnTensorDescriptor_t derivedNormMeanVarDesc,
                                                          const cudnnTensorDescriptor_t xDesc, cudnnNormMode_t mode,
                                                          int groupCnt) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(sb, derivedNormScaleBiasDesc, tensor);
        ODNN_LOOKUP(mv, derivedNormMeanVarDesc, tensor);
        ODNN_LOOKUP(x, xDesc, tensor);
        TensorDesc a, b;
        ODNN_RETURN_IF_ERROR(odnn::core::derive_norm_descs(&a, &b, *x, static_cast<int>(mode), groupCnt));
        static_cast<TensorDesc&>(*sb) = a;
        static_cast<TensorDesc&>(*mv) = b;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const void* normScale, const void* normBias,
    const cudnnTensorDescriptor_t normMeanVarDesc, const void* estimatedMean, const void* estimatedVariance,
    const cudnnTensorDescriptor_t zDesc, const void* z, cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t yDesc, void* y, double epsilon, int groupCnt) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_RETURN_IF_ERROR(check_norm_args(mode, algo, groupCnt));
        odnn::core::BnFwdInferenceProblem p;
        odnn::core::NormRequest r;
        r.mode = norm_mode_to_bn(mode);
        r.ops = static_cast<int>(normOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        if (r.ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(zDesc, "zDesc", &p.z));
        ODNN_RETURN_IF_ERROR(tensor_arg(normScaleBiasDesc, "normScaleBiasDesc", &p.scale_bias));
        ODNN_RETURN_IF_ERROR(tensor_arg(normMeanVarDesc, "normMeanVarDesc", &p.mean_var));
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        ODNN_RETURN_IF_ERROR(read_scale(alpha, beta, "alpha", "beta", p.x, &p.out));
        p.x_data = x;
        p.z_data = z;
        p.y_data = y;
        p.scale = normScale;
        p.bias = normBias;
        p.mean = estimatedMean;
        p.var = estimatedVariance;
        p.k.epsilon = epsilon;
        return odnn::core::batch_norm_forward_inference(h, r, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationForwardTrainingWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t normMeanVarDesc, size_t* sizeInBytes, int groupCnt) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        ODNN_RETURN_IF_ERROR(check_norm_args(mode, algo, groupCnt));
        odnn::core::BnFwdTrainingProblem p;
        odnn::core::NormRequest r;
        r.mode = norm_mode_to_bn(mode);
        r.ops = static_cast<int>(normOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        if (r.ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(zDesc, "zDesc", &p.z));
        ODNN_RETURN_IF_ERROR(tensor_arg(normScaleBiasDesc, "normScaleBiasDesc", &p.scale_bias));
        ODNN_RETURN_IF_ERROR(tensor_arg(normMeanVarDesc, "normMeanVarDesc", &p.mean_var));
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        auto size = odnn::core::batch_norm_forward_training_workspace(h, r, p);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationBackwardWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnTensorDescriptor_t dzDesc, const cudnnTensorDescriptor_t dxDesc,
    const cudnnTensorDescriptor_t dNormScaleBiasDesc, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t normMeanVarDesc, size_t* sizeInBytes, int groupCnt) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        ODNN_RETURN_IF_ERROR(check_norm_args(mode, algo, groupCnt));
        odnn::core::BnBackwardProblem p;
        odnn::core::NormRequest r;
        r.mode = norm_mode_to_bn(mode);
        r.ops = static_cast<int>(normOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        if (r.ops != CUDNN_NORM_OPS_NORM) ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        if (r.ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(dzDesc, "dzDesc", &p.dz));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(tensor_arg(dNormScaleBiasDesc, "dNormScaleBiasDesc", &p.scale_bias));
        ODNN_RETURN_IF_ERROR(tensor_arg(normMeanVarDesc, "normMeanVarDesc", &p.mean_var));
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        auto size = odnn::core::batch_norm_backward_workspace(h, r, p);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationTrainingReserveSpaceSize(cudnnHandle_t handle, cudnnNormMode_t mode,
                                                                        cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
                                                                        const cudnnActivationDescriptor_t activationDesc,
                                                                        const cudnnTensorDescriptor_t xDesc,
                                                                        size_t* sizeInBytes, int groupCnt) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        ODNN_RETURN_IF_ERROR(check_norm_args(mode, algo, groupCnt));
        odnn::core::NormRequest r;
        r.mode = norm_mode_to_bn(mode);
        r.ops = static_cast<int>(normOps);
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        TensorDesc x;
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &x));
        auto size = odnn::core::batch_norm_reserve_space(h, r, x);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t xDesc, const void* xData,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const void* normScale, const void* normBias,
    double exponentialAverageFactor, const cudnnTensorDescriptor_t normMeanVarDesc, void* resultRunningMean,
    void* resultRunningVariance, double epsilon, void* resultSaveMean, void* resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t zDesc, const void* zData,
    const cudnnTensorDescriptor_t yDesc, void* yData, void* workspace, size_t workSpaceSizeInBytes,
    void* reserveSpace, size_t reserveSpaceSizeInBytes, int groupCnt) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_RETURN_IF_ERROR(check_norm_args(mode, algo, groupCnt));
        odnn::core::BnFwdTrainingProblem p;
        odnn::core::NormRequest r;
        r.mode = norm_mode_to_bn(mode);
        r.ops = static_cast<int>(normOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        if (r.ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(zDesc, "zDesc", &p.z));
        ODNN_RETURN_IF_ERROR(tensor_arg(normScaleBiasDesc, "normScaleBiasDesc", &p.scale_bias));
        ODNN_RETURN_IF_ERROR(tensor_arg(normMeanVarDesc, "normMeanVarDesc", &p.mean_var));
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        ODNN_RETURN_IF_ERROR(read_scale(alpha, beta, "alpha", "beta", p.x, &p.out));
        p.x_data = xData;
        p.z_data = zData;
        p.y_data = yData;
        p.scale = normScale;
        p.bias = normBias;
        p.factor = exponentialAverageFactor;
        p.running_mean = resultRunningMean;
        p.running_var = resultRunningVariance;
        p.save_mean = resultSaveMean;
        p.save_inv_var = resultSaveInvVariance;
        p.k.epsilon = epsilon;
        p.caller_workspace = true;
        p.workspace = workspace;
        p.workspace_bytes = workSpaceSizeInBytes;
        (void)reserveSpace;
        (void)reserveSpaceSizeInBytes;
        return odnn::core::batch_norm_forward_training(h, r, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnNormalizationBackward(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const void* alphaDataDiff, const void* betaDataDiff, const void* alphaParamDiff, const void* betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void* xData, const cudnnTensorDescriptor_t yDesc, const void* yData,
    const cudnnTensorDescriptor_t dyDesc, const void* dyData, const cudnnTensorDescriptor_t dzDesc, void* dzData,
    const cudnnTensorDescriptor_t dxDesc, void* dxData, const cudnnTensorDescriptor_t dNormScaleBiasDesc,
    const void* normScaleData, const void* normBiasData, void* dNormScaleData, void* dNormBiasData, double epsilon,
    const cudnnTensorDescriptor_t normMeanVarDesc, const void* savedMean, const void* savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void* workSpace, size_t workSpaceSizeInBytes, void* reserveSpace,
    size_t reserveSpaceSizeInBytes, int groupCnt) {
    return with_handle(__func__, handle, [&](const odnn::core::Handle& h) -> Status {
        ODNN_RETURN_IF_ERROR(check_norm_args(mode, algo, groupCnt));
        odnn::core::BnBackwardProblem p;
        odnn::core::NormRequest r;
        r.mode = norm_mode_to_bn(mode);
        r.ops = static_cast<int>(normOps);
        ODNN_RETURN_IF_ERROR(tensor_arg(xDesc, "xDesc", &p.x));
        if (r.ops != CUDNN_NORM_OPS_NORM) ODNN_RETURN_IF_ERROR(tensor_arg(yDesc, "yDesc", &p.y));
        ODNN_RETURN_IF_ERROR(tensor_arg(dyDesc, "dyDesc", &p.dy));
        if (r.ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION) ODNN_RETURN_IF_ERROR(tensor_arg(dzDesc, "dzDesc", &p.dz));
        ODNN_RETURN_IF_ERROR(tensor_arg(dxDesc, "dxDesc", &p.dx));
        ODNN_RETURN_IF_ERROR(tensor_arg(dNormScaleBiasDesc, "dNormScaleBiasDesc", &p.scale_bias));
        ODNN_RETURN_IF_ERROR(tensor_arg(normMeanVarDesc, "normMeanVarDesc", &p.mean_var));
        ODNN_RETURN_IF_ERROR(optional_activation(activationDesc, &r.act));
        ODNN_RETURN_IF_ERROR(read_scale(alphaDataDiff, betaDataDiff, "alphaDataDiff", "betaDataDiff", p.x, &p.data));
        ODNN_RETURN_IF_ERROR(
            read_scale(alphaParamDiff, betaParamDiff, "alphaParamDiff", "betaParamDiff", p.x, &p.param));
        p.x_data = xData;
        p.y_data = yData;
        p.dy_data = dyData;
        p.dz_data = dzData;
        p.dx_data = dxData;
        p.scale = normScaleData;
        (void)normBiasData;
        p.dscale = dNormScaleData;
        p.dbias = dNormBiasData;
        p.saved_mean = savedMean;
        p.saved_inv_var = savedInvVariance;
        p.k.epsilon = epsilon;
        p.caller_workspace = true;
        p.workspace = workSpace;
        p.workspace_bytes = workSpaceSizeInBytes;
        (void)reserveSpace;
        (void)reserveSpaceSizeInBytes;
        return odnn::core::batch_norm_backward(h, r, p);
    });
}

}  // extern "C"
