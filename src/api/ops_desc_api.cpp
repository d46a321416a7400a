// cudnn_ops entry points for the small legacy descriptors: activation, pooling, LRN,
// op-tensor, reduce-tensor, tensor transform, dropout and spatial transformer.
// Arguments are checked here; the rules and the state live in core/ops_desc.
#include "api/api_common.hpp"
#include "core/handle.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

using odnn::api::create_object;
using odnn::api::destroy_object;
using odnn::api::guard;
using odnn::core::ObjKind;
using odnn::core::Status;

extern "C" {

// ---- Activation ----

cudnnStatus_t CUDNNWINAPI cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* activationDesc) {
    return guard(__func__, [&] { return create_object(activationDesc, ObjKind::activation, "activationDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t activationDesc) {
    return guard(__func__, [&] { return destroy_object(activationDesc, ObjKind::activation, "activationDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc,
                                                       cudnnActivationMode_t mode, cudnnNanPropagation_t reluNanOpt,
                                                       double coef) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, activationDesc, activation);
        return odnn::core::set_activation(*d, mode, reluNanOpt, coef);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetActivationDescriptor(const cudnnActivationDescriptor_t activationDesc,
                                                       cudnnActivationMode_t* mode, cudnnNanPropagation_t* reluNanOpt,
                                                       double* coef) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, activationDesc, activation);
        ODNN_REQUIRE_PARAM(mode && reluNanOpt && coef, "mode, reluNanOpt and coef must not be NULL");
        *mode = d->mode;
        *reluNanOpt = d->nan_opt;
        *coef = d->coef;
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t activationDesc,
                                                                double swish_beta) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, activationDesc, activation);
        d->swish_beta = swish_beta;  // any value, as in cuDNN
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t activationDesc,
                                                                double* swish_beta) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, activationDesc, activation);
        ODNN_REQUIRE_NOT_NULL(swish_beta);
        *swish_beta = d->swish_beta;
        return Status::ok();
    });
}

// ---- Pooling ----

cudnnStatus_t CUDNNWINAPI cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t* poolingDesc) {
    return guard(__func__, [&] { return create_object(poolingDesc, ObjKind::pooling, "poolingDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t poolingDesc) {
    return guard(__func__, [&] { return destroy_object(poolingDesc, ObjKind::pooling, "poolingDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t poolingDesc, cudnnPoolingMode_t mode,
                                                      cudnnNanPropagation_t maxpoolingNanOpt, int windowHeight,
                                                      int windowWidth, int verticalPadding, int horizontalPadding,
                                                      int verticalStride, int horizontalStride) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, poolingDesc, pooling);
        const int windows[2] = {windowHeight, windowWidth};
        const int pads[2] = {verticalPadding, horizontalPadding};
        const int strides[2] = {verticalStride, horizontalStride};
        return odnn::core::set_pooling_nd(*d, mode, maxpoolingNanOpt, 2, windows, pads, strides);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetPooling2dDescriptor(const cudnnPoolingDescriptor_t poolingDesc,
                                                      cudnnPoolingMode_t* mode, cudnnNanPropagation_t* maxpoolingNanOpt,
                                                      int* windowHeight, int* windowWidth, int* verticalPadding,
                                                      int* horizontalPadding, int* verticalStride,
                                                      int* horizontalStride) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, poolingDesc, pooling);
        ODNN_REQUIRE_PARAM(mode && maxpoolingNanOpt && windowHeight && windowWidth && verticalPadding &&
                               horizontalPadding && verticalStride && horizontalStride,
                           "an output pointer is NULL");
        // As cuDNN: the first two dims whatever the rank (zeros while unset).
        *mode = d->mode;
        *maxpoolingNanOpt = d->nan_opt;
        *windowHeight = d->windows[0];
        *windowWidth = d->windows[1];
        *verticalPadding = d->pads[0];
        *horizontalPadding = d->pads[1];
        *verticalStride = d->strides[0];
        *horizontalStride = d->strides[1];
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t poolingDesc,
                                                      const cudnnPoolingMode_t mode,
                                                      const cudnnNanPropagation_t maxpoolingNanOpt, int nbDims,
                                                      const int windowDimA[], const int paddingA[],
                                                      const int strideA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, poolingDesc, pooling);
        return odnn::core::set_pooling_nd(*d, mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA, strideA);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetPoolingNdDescriptor(const cudnnPoolingDescriptor_t poolingDesc, int nbDimsRequested,
                                                      cudnnPoolingMode_t* mode, cudnnNanPropagation_t* maxpoolingNanOpt,
                                                      int* nbDims, int windowDimA[], int paddingA[], int strideA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, poolingDesc, pooling);
        ODNN_REQUIRE_SUPPORTED(nbDimsRequested <= odnn::core::kMaxPoolingDims,
                               "nbDimsRequested = %d: pooling has at most %d spatial dimensions", nbDimsRequested,
                               odnn::core::kMaxPoolingDims);
        ODNN_REQUIRE_PARAM(mode && maxpoolingNanOpt && nbDims, "mode, maxpoolingNanOpt and nbDims must not be NULL");
        ODNN_REQUIRE_PARAM(nbDimsRequested <= 0 || (windowDimA && paddingA && strideA),
                           "windowDimA, paddingA and strideA must not be NULL when nbDimsRequested > 0");
        *mode = d->mode;
        *maxpoolingNanOpt = d->nan_opt;
        *nbDims = d->nb_dims;
        // As cuDNN: nbDimsRequested entries, even past the descriptor's rank.
        for (int i = 0; i < nbDimsRequested; ++i) {
            windowDimA[i] = d->windows[i];
            paddingA[i] = d->pads[i];
            strideA[i] = d->strides[i];
        }
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t poolingDesc,
                                                            const cudnnTensorDescriptor_t inputTensorDesc, int nbDims,
                                                            int outputTensorDimA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, poolingDesc, pooling);
        ODNN_LOOKUP(x, inputTensorDesc, tensor);
        ODNN_REQUIRE_NOT_NULL(outputTensorDimA);
        return odnn::core::pooling_forward_output_dims(*d, *x, nbDims, outputTensorDimA);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetPooling2dForwardOutputDim(const cudnnPoolingDescriptor_t poolingDesc,
                                                            const cudnnTensorDescriptor_t inputTensorDesc, int* n,
                                                            int* c, int* h, int* w) {
    return guard(__func__, [&]() -> Status {
        ODNN_REQUIRE_PARAM(n && c && h && w, "n, c, h and w must not be NULL");
        // As cuDNN: all four outputs are written, zeros for what could not be computed.
        int dims[4] = {0, 0, 0, 0};
        const Status s = [&]() -> Status {
            ODNN_LOOKUP(d, poolingDesc, pooling);
            ODNN_LOOKUP(x, inputTensorDesc, tensor);
            return odnn::core::pooling_forward_output_dims(*d, *x, 4, dims);
        }();
        *n = dims[0];
        *c = dims[1];
        *h = dims[2];
        *w = dims[3];
        return s;
    });
}

// ---- LRN ----

cudnnStatus_t CUDNNWINAPI cudnnCreateLRNDescriptor(cudnnLRNDescriptor_t* normDesc) {
    return guard(__func__, [&] { return create_object(normDesc, ObjKind::lrn, "normDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyLRNDescriptor(cudnnLRNDescriptor_t lrnDesc) {
    return guard(__func__, [&] { return destroy_object(lrnDesc, ObjKind::lrn, "lrnDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned lrnN, double lrnAlpha,
                                                double lrnBeta, double lrnK) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, normDesc, lrn);
        return odnn::core::set_lrn(*d, lrnN, lrnAlpha, lrnBeta, lrnK);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned* lrnN, double* lrnAlpha,
                                                double* lrnBeta, double* lrnK) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, normDesc, lrn);
        // Every output is optional, as in cuDNN.
        if (lrnN) *lrnN = d->n;
        if (lrnAlpha) *lrnAlpha = d->alpha;
        if (lrnBeta) *lrnBeta = d->beta;
        if (lrnK) *lrnK = d->k;
        return Status::ok();
    });
}

// ---- Op-tensor ----

cudnnStatus_t CUDNNWINAPI cudnnCreateOpTensorDescriptor(cudnnOpTensorDescriptor_t* opTensorDesc) {
    return guard(__func__, [&] { return create_object(opTensorDesc, ObjKind::op_tensor, "opTensorDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyOpTensorDescriptor(cudnnOpTensorDescriptor_t opTensorDesc) {
    return guard(__func__, [&] { return destroy_object(opTensorDesc, ObjKind::op_tensor, "opTensorDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetOpTensorDescriptor(cudnnOpTensorDescriptor_t opTensorDesc,
                                                     cudnnOpTensorOp_t opTensorOp, cudnnDataType_t opTensorCompType,
                                                     cudnnNanPropagation_t opTensorNanOpt) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, opTensorDesc, op_tensor);
        return odnn::core::set_op_tensor(*d, opTensorOp, opTensorCompType, opTensorNanOpt);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetOpTensorDescriptor(const cudnnOpTensorDescriptor_t opTensorDesc,
                                                     cudnnOpTensorOp_t* opTensorOp, cudnnDataType_t* opTensorCompType,
                                                     cudnnNanPropagation_t* opTensorNanOpt) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, opTensorDesc, op_tensor);
        ODNN_REQUIRE_PARAM(opTensorOp && opTensorCompType && opTensorNanOpt,
                           "opTensorOp, opTensorCompType and opTensorNanOpt must not be NULL");
        *opTensorOp = d->op;
        *opTensorCompType = d->comp_type;
        *opTensorNanOpt = d->nan_opt;
        return Status::ok();
    });
}

// ---- Reduce-tensor ----

cudnnStatus_t CUDNNWINAPI cudnnCreateReduceTensorDescriptor(cudnnReduceTensorDescriptor_t* reduceTensorDesc) {
    return guard(__func__, [&] { return create_object(reduceTensorDesc, ObjKind::reduce_tensor, "reduceTensorDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyReduceTensorDescriptor(cudnnReduceTensorDescriptor_t reduceTensorDesc) {
    return guard(__func__,
                 [&] { return destroy_object(reduceTensorDesc, ObjKind::reduce_tensor, "reduceTensorDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetReduceTensorDescriptor(cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                         cudnnReduceTensorOp_t reduceTensorOp,
                                                         cudnnDataType_t reduceTensorCompType,
                                                         cudnnNanPropagation_t reduceTensorNanOpt,
                                                         cudnnReduceTensorIndices_t reduceTensorIndices,
                                                         cudnnIndicesType_t reduceTensorIndicesType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, reduceTensorDesc, reduce_tensor);
        return odnn::core::set_reduce_tensor(*d, reduceTensorOp, reduceTensorCompType, reduceTensorNanOpt,
                                             reduceTensorIndices, reduceTensorIndicesType);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetReduceTensorDescriptor(const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                         cudnnReduceTensorOp_t* reduceTensorOp,
                                                         cudnnDataType_t* reduceTensorCompType,
                                                         cudnnNanPropagation_t* reduceTensorNanOpt,
                                                         cudnnReduceTensorIndices_t* reduceTensorIndices,
                                                         cudnnIndicesType_t* reduceTensorIndicesType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, reduceTensorDesc, reduce_tensor);
        ODNN_REQUIRE_PARAM(reduceTensorOp && reduceTensorCompType && reduceTensorNanOpt && reduceTensorIndices &&
                               reduceTensorIndicesType,
                           "an output pointer is NULL");
        *reduceTensorOp = d->op;
        *reduceTensorCompType = d->comp_type;
        *reduceTensorNanOpt = d->nan_opt;
        *reduceTensorIndices = d->indices;
        *reduceTensorIndicesType = d->indices_type;
        return Status::ok();
    });
}

// ---- Tensor transform ----

cudnnStatus_t CUDNNWINAPI cudnnCreateTensorTransformDescriptor(cudnnTensorTransformDescriptor_t* transformDesc) {
    return guard(__func__, [&] { return create_object(transformDesc, ObjKind::tensor_transform, "transformDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc) {
    return guard(__func__, [&] { return destroy_object(transformDesc, ObjKind::tensor_transform, "transformDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc,
                                                            const uint32_t nbDims, const cudnnTensorFormat_t destFormat,
                                                            const int32_t padBeforeA[], const int32_t padAfterA[],
                                                            const uint32_t foldA[],
                                                            const cudnnFoldingDirection_t direction) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, transformDesc, tensor_transform);
        // NULL arrays are allowed: they leave those entries as they were.
        return odnn::core::set_tensor_transform(*d, nbDims, destFormat, padBeforeA, padAfterA, foldA, direction);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc,
                                                            uint32_t nbDimsRequested, cudnnTensorFormat_t* destFormat,
                                                            int32_t padBeforeA[], int32_t padAfterA[], uint32_t foldA[],
                                                            cudnnFoldingDirection_t* direction) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, transformDesc, tensor_transform);
        // As cuDNN: any request of 3..CUDNN_DIM_MAX dims is served (padding and folds
        // past the descriptor's rank read as stored), whatever the rank; outputs are optional.
        ODNN_REQUIRE_PARAM(nbDimsRequested >= 3 && nbDimsRequested <= odnn::core::kMaxTransformDims,
                           "nbDimsRequested = %u is outside [3, %u]", nbDimsRequested, odnn::core::kMaxTransformDims);
        if (destFormat) *destFormat = d->dest_format;
        if (direction) *direction = d->direction;
        for (uint32_t i = 0; i < nbDimsRequested; ++i) {
            if (padBeforeA) padBeforeA[i] = d->pad_before[i];
            if (padAfterA) padAfterA[i] = d->pad_after[i];
        }
        if (foldA)
            for (uint32_t i = 0; i + 2 < nbDimsRequested; ++i) foldA[i] = d->fold[i];
        return Status::ok();
    });
}

// ---- Dropout ----

cudnnStatus_t CUDNNWINAPI cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t* dropoutDesc) {
    return guard(__func__, [&] { return create_object(dropoutDesc, ObjKind::dropout, "dropoutDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc) {
    return guard(__func__, [&] { return destroy_object(dropoutDesc, ObjKind::dropout, "dropoutDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDropoutGetStatesSize(cudnnHandle_t handle, size_t* sizeInBytes) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(h, handle, handle);
            ODNN_REQUIRE_NOT_NULL(sizeInBytes);
            *sizeInBytes = odnn::core::dropout_states_size(*h);
            return Status::ok();
        },
        handle);
}

cudnnStatus_t CUDNNWINAPI cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t xdesc, size_t* sizeInBytes) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(x, xdesc, tensor);
        ODNN_REQUIRE_NOT_NULL(sizeInBytes);
        auto size = odnn::core::dropout_reserve_space_size(*x);
        if (!size.is_ok()) return size.status();
        *sizeInBytes = size.value();
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc, cudnnHandle_t handle,
                                                    float dropout, void* states, size_t stateSizeInBytes,
                                                    unsigned long long seed) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(d, dropoutDesc, dropout);
            ODNN_LOOKUP(h, handle, handle);
            return odnn::core::set_dropout(*d, *h, dropout, states, stateSizeInBytes, seed);
        },
        handle);
}

cudnnStatus_t CUDNNWINAPI cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc, cudnnHandle_t handle,
                                                        float dropout, void* states, size_t stateSizeInBytes,
                                                        unsigned long long seed) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(d, dropoutDesc, dropout);
            ODNN_LOOKUP(h, handle, handle);
            return odnn::core::restore_dropout(*d, *h, dropout, states, stateSizeInBytes, seed);
        },
        handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc, cudnnHandle_t handle,
                                                    float* dropout, void** states, unsigned long long* seed) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(d, dropoutDesc, dropout);
            ODNN_LOOKUP(h, handle, handle);
            (void)h;
            ODNN_REQUIRE_PARAM(dropout && states && seed, "dropout, states and seed must not be NULL");
            *dropout = d->dropout;
            *states = d->states;
            *seed = d->seed;
            return Status::ok();
        },
        handle);
}

// ---- Spatial transformer ----

cudnnStatus_t CUDNNWINAPI cudnnCreateSpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t* stDesc) {
    return guard(__func__, [&] { return create_object(stDesc, ObjKind::spatial_transformer, "stDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroySpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t stDesc) {
    return guard(__func__, [&] { return destroy_object(stDesc, ObjKind::spatial_transformer, "stDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t stDesc,
                                                                 cudnnSamplerType_t samplerType,
                                                                 cudnnDataType_t dataType, const int nbDims,
                                                                 const int dimA[]) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, stDesc, spatial_transformer);
        return odnn::core::set_spatial_transformer_nd(*d, samplerType, dataType, nbDims, dimA);
    });
}

}  // extern "C"
