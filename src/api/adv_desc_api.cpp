// cudnn_adv entry points for the CTC loss, RNN, RNN data, sequence data and attention
// descriptors, and the RNN / attention buffer-size queries. cuDNN answers SUCCESS for
// NULL output pointers in most getters and writes the others; where it does, so do we.
// Where NVIDIA's library crashes on a NULL (cudnnSetSeqDataDescriptor's arrays,
// cudnnGetRNNWeightParams with a descriptor but no address pointer) odnn answers
// BAD_PARAM.
#include <cstring>

#include "api/api_common.hpp"
#include "core/adv_desc.hpp"
#include "core/handle.hpp"
#include "core/tensor_desc.hpp"

using odnn::api::guard;
using odnn::core::ObjKind;
using odnn::core::Status;

namespace {

// A dropout descriptor argument: NULL (no dropout) or a live dropout descriptor.
Status check_dropout(cudnnDropoutDescriptor_t p, const char* arg) {
    if (p == nullptr) return Status::ok();
    return odnn::api::check_object(p, ObjKind::dropout, arg);
}

template <class T, class V>
void put(T* out, V value) {
    if (out) *out = static_cast<T>(value);
}

// cuDNN's rule for each (desc, addr) pair of cudnnGetRNNWeightParams: both NULL skips
// the region, an address pointer alone is BAD_PARAM; a descriptor without an address
// pointer crashes NVIDIA's library and is BAD_PARAM here.
Status check_region_args(cudnnTensorDescriptor_t desc, void** addr, const char* d_name, const char* a_name) {
    ODNN_REQUIRE_PARAM((desc == nullptr) == (addr == nullptr), "%s and %s must both be given or both be NULL", d_name,
                       a_name);
    if (desc) ODNN_RETURN_IF_ERROR(odnn::api::check_object(desc, ObjKind::tensor, d_name));
    return Status::ok();
}

// Writes one weight-space region into (desc, addr), as cuDNN does: the address is
// stored before the bounds check; a region that does not exist reads as NULL with the
// descriptor reset to an unset one.
Status put_weight_region(const odnn::core::RnnWeightRegion& r, cudnnDataType_t dtype, size_t weight_space_size,
                         const void* weight_space, cudnnTensorDescriptor_t desc, void** addr, const char* what) {
    if (desc == nullptr) return Status::ok();
    if (!r.present) {
        static_cast<odnn::core::TensorDesc&>(*desc) = odnn::core::TensorDesc();
        *addr = nullptr;
        return Status::ok();
    }
    const size_t es = odnn::core::adv_dtype_size(dtype);
    ODNN_REQUIRE_SUPPORTED(r.rows <= INT32_MAX && r.cols <= INT32_MAX && r.elements() <= INT32_MAX,
                           "the %s (%lld x %lld) is too large for a tensor descriptor", what,
                           static_cast<long long>(r.rows), static_cast<long long>(r.cols));
    const int dims[3] = {1, static_cast<int>(r.rows), static_cast<int>(r.cols)};
    const int strides[3] = {static_cast<int>(r.elements()), static_cast<int>(r.cols), 1};
    ODNN_RETURN_IF_ERROR(odnn::core::set_tensor_nd(*desc, dtype, 3, dims, strides));
    *addr = const_cast<char*>(static_cast<const char*>(weight_space)) + r.offset * static_cast<int64_t>(es);
    const size_t end = static_cast<size_t>(r.offset + r.elements()) * es;
    ODNN_REQUIRE_PARAM(end <= weight_space_size, "weightSpaceSize %zu is too small: the %s ends at byte %zu",
                       weight_space_size, what, end);
    return Status::ok();
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------
// CTC loss
// ---------------------------------------------------------------------------

cudnnStatus_t CUDNNWINAPI cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t* ctcLossDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(ctcLossDesc, ObjKind::ctc_loss, "ctcLossDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(ctcLossDesc, ObjKind::ctc_loss, "ctcLossDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        return odnn::core::set_ctc_loss(*d, compType, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN, 0);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                      cudnnLossNormalizationMode_t normMode,
                                                      cudnnNanPropagation_t gradMode) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        return odnn::core::set_ctc_loss(*d, compType, normMode, gradMode, 0);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                       cudnnLossNormalizationMode_t normMode,
                                                       cudnnNanPropagation_t gradMode, int maxLabelLength) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        return odnn::core::set_ctc_loss(*d, compType, normMode, gradMode, maxLabelLength);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor_v9(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                       cudnnLossNormalizationMode_t normMode,
                                                       cudnnCTCGradMode_t ctcGradMode, int maxLabelLength) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        return odnn::core::set_ctc_loss(*d, compType, normMode, odnn::core::ctc_grad_mode_to_nan_opt(ctcGradMode),
                                        maxLabelLength);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t* compType) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        put(compType, d->comp_type);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t* compType,
                                                      cudnnLossNormalizationMode_t* normMode,
                                                      cudnnNanPropagation_t* gradMode) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        put(compType, d->comp_type);
        put(normMode, d->norm_mode);
        put(gradMode, d->grad_mode);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t* compType,
                                                       cudnnLossNormalizationMode_t* normMode,
                                                       cudnnNanPropagation_t* gradMode, int* maxLabelLength) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        put(compType, d->comp_type);
        put(normMode, d->norm_mode);
        put(gradMode, d->grad_mode);
        put(maxLabelLength, d->max_label_length);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor_v9(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t* compType,
                                                       cudnnLossNormalizationMode_t* normMode,
                                                       cudnnCTCGradMode_t* ctcGradMode, int* maxLabelLength) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, ctcLossDesc, ctc_loss);
        put(compType, d->comp_type);
        put(normMode, d->norm_mode);
        put(ctcGradMode, d->ctc_grad_mode());
        put(maxLabelLength, d->max_label_length);
        return Status::ok();
    });
}

// ---------------------------------------------------------------------------
// RNN
// ---------------------------------------------------------------------------

cudnnStatus_t CUDNNWINAPI cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t* rnnDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(rnnDesc, ObjKind::rnn, "rnnDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t rnnDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(rnnDesc, ObjKind::rnn, "rnnDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t algo,
                                                   cudnnRNNMode_t cellMode, cudnnRNNBiasMode_t biasMode,
                                                   cudnnDirectionMode_t dirMode, cudnnRNNInputMode_t inputMode,
                                                   cudnnDataType_t dataType, cudnnDataType_t mathPrec,
                                                   cudnnMathType_t mathType, int32_t inputSize, int32_t hiddenSize,
                                                   int32_t projSize, int32_t numLayers,
                                                   cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDesc, rnn);
        ODNN_RETURN_IF_ERROR(check_dropout(dropoutDesc, "dropoutDesc"));
        const odnn::core::RnnV8Params p{algo,     cellMode,  biasMode,   dirMode,  inputMode, dataType,    mathPrec,
                                        mathType, inputSize, hiddenSize, projSize, numLayers, dropoutDesc, auxFlags};
        return odnn::core::set_rnn_v8(*d, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t* algo,
                                                   cudnnRNNMode_t* cellMode, cudnnRNNBiasMode_t* biasMode,
                                                   cudnnDirectionMode_t* dirMode, cudnnRNNInputMode_t* inputMode,
                                                   cudnnDataType_t* dataType, cudnnDataType_t* mathPrec,
                                                   cudnnMathType_t* mathType, int32_t* inputSize, int32_t* hiddenSize,
                                                   int32_t* projSize, int32_t* numLayers,
                                                   cudnnDropoutDescriptor_t* dropoutDesc, uint32_t* auxFlags) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDesc, rnn);
        ODNN_REQUIRE(d->is_set, CUDNN_STATUS_NOT_INITIALIZED,
                     "rnnDesc has not been set (call cudnnSetRNNDescriptor_v8 first)");
        put(algo, d->algo);
        put(cellMode, d->cell_mode);
        put(biasMode, d->bias_mode);
        put(dirMode, d->dir_mode);
        put(inputMode, d->input_mode);
        put(dataType, d->data_type);
        put(mathPrec, d->math_prec);
        put(mathType, d->math_type);
        put(inputSize, d->input_size);
        put(hiddenSize, d->hidden_size);
        put(projSize, d->proj_size);
        put(numLayers, d->num_layers);
        put(dropoutDesc, d->dropout);
        put(auxFlags, d->aux_flags);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnRNNSetClip_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t clipMode,
                                             cudnnNanPropagation_t clipNanOpt, double lclip, double rclip) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDesc, rnn);
        return odnn::core::set_rnn_clip(*d, clipMode, clipNanOpt, lclip, rclip);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnRNNSetClip_v9(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t clipMode, double lclip,
                                             double rclip) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDesc, rnn);
        // The v9 setter has no NaN option; cuDNN records PROPAGATE_NAN.
        return odnn::core::set_rnn_clip(*d, clipMode, CUDNN_PROPAGATE_NAN, lclip, rclip);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnRNNGetClip_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t* clipMode,
                                             cudnnNanPropagation_t* clipNanOpt, double* lclip, double* rclip) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDesc, rnn);
        put(clipMode, d->clip_mode);
        put(clipNanOpt, d->clip_nan_opt);
        put(lclip, d->lclip);
        put(rclip, d->rclip);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnRNNGetClip_v9(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t* clipMode, double* lclip,
                                             double* rclip) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDesc, rnn);
        put(clipMode, d->clip_mode);
        put(lclip, d->lclip);
        put(rclip, d->rclip);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNWeightSpaceSize(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                     size_t* weightSpaceSize) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(h, handle, handle);
            ODNN_LOOKUP(d, rnnDesc, rnn);
            ODNN_REQUIRE_NOT_NULL(weightSpaceSize);
            (void)h;
            // An unset descriptor has no weights (cuDNN answers SUCCESS too, without
            // writing the size).
            *weightSpaceSize = d->is_set ? odnn::core::rnn_weight_space_bytes(*d) : 0;
            return Status::ok();
        },
        handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNWeightParams(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                  int32_t pseudoLayer, size_t weightSpaceSize, const void* weightSpace,
                                                  int32_t linLayerID, cudnnTensorDescriptor_t mDesc, void** mAddr,
                                                  cudnnTensorDescriptor_t bDesc, void** bAddr) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(h, handle, handle);
            ODNN_LOOKUP(d, rnnDesc, rnn);
            (void)h;
            ODNN_REQUIRE_PARAM(d->is_set, "rnnDesc has not been set (call cudnnSetRNNDescriptor_v8 first)");
            ODNN_RETURN_IF_ERROR(check_region_args(mDesc, mAddr, "mDesc", "mAddr"));
            ODNN_RETURN_IF_ERROR(check_region_args(bDesc, bAddr, "bDesc", "bAddr"));
            odnn::core::RnnWeightRegion m, b;
            ODNN_RETURN_IF_ERROR(odnn::core::rnn_weight_params(*d, pseudoLayer, linLayerID, &m, &b));
            ODNN_RETURN_IF_ERROR(
                put_weight_region(m, d->data_type, weightSpaceSize, weightSpace, mDesc, mAddr, "matrix m"));
            return put_weight_region(b, d->data_type, weightSpaceSize, weightSpace, bDesc, bAddr, "bias b");
        },
        handle);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNTempSpaceSizes(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                    cudnnForwardMode_t fwdMode, cudnnRNNDataDescriptor_t xDesc,
                                                    size_t* workSpaceSize, size_t* reserveSpaceSize) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(h, handle, handle);
            ODNN_LOOKUP(d, rnnDesc, rnn);
            ODNN_LOOKUP(x, xDesc, rnn_data);
            (void)h;
            return odnn::core::rnn_temp_space_sizes(*d, fwdMode, *x, workSpaceSize, reserveSpaceSize);
        },
        handle);
}

// ---------------------------------------------------------------------------
// RNN data
// ---------------------------------------------------------------------------

cudnnStatus_t CUDNNWINAPI cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t* rnnDataDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(rnnDataDesc, ObjKind::rnn_data, "rnnDataDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(rnnDataDesc, ObjKind::rnn_data, "rnnDataDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t dataType,
                                                    cudnnRNNDataLayout_t layout, int maxSeqLength, int batchSize,
                                                    int vectorSize, const int seqLengthArray[], void* paddingFill) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDataDesc, rnn_data);
        return odnn::core::set_rnn_data(*d, dataType, layout, maxSeqLength, batchSize, vectorSize, seqLengthArray,
                                        paddingFill);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t* dataType,
                                                    cudnnRNNDataLayout_t* layout, int* maxSeqLength, int* batchSize,
                                                    int* vectorSize, int arrayLengthRequested, int seqLengthArray[],
                                                    void* paddingFill) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, rnnDataDesc, rnn_data);
        ODNN_REQUIRE_PARAM(dataType && layout && maxSeqLength && batchSize && vectorSize && paddingFill,
                           "dataType, layout, maxSeqLength, batchSize, vectorSize and paddingFill must not be NULL");
        ODNN_REQUIRE_PARAM(arrayLengthRequested >= 0, "arrayLengthRequested = %d is negative", arrayLengthRequested);
        ODNN_REQUIRE_PARAM(arrayLengthRequested == 0 || seqLengthArray != nullptr,
                           "seqLengthArray is NULL with arrayLengthRequested = %d", arrayLengthRequested);
        *dataType = d->data_type;
        *layout = d->layout;
        *maxSeqLength = d->max_seq_length;
        *batchSize = d->batch_size;
        *vectorSize = d->vector_size;
        // Entries past the batch read as 0, as in cuDNN.
        for (int i = 0; i < arrayLengthRequested; ++i)
            seqLengthArray[i] = i < static_cast<int>(d->seq_lengths.size()) ? d->seq_lengths[i] : 0;
        std::memcpy(paddingFill, d->padding_fill, odnn::core::adv_dtype_size(d->data_type));
        return Status::ok();
    });
}

// ---------------------------------------------------------------------------
// Sequence data
// ---------------------------------------------------------------------------

cudnnStatus_t CUDNNWINAPI cudnnCreateSeqDataDescriptor(cudnnSeqDataDescriptor_t* seqDataDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(seqDataDesc, ObjKind::seq_data, "seqDataDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroySeqDataDescriptor(cudnnSeqDataDescriptor_t seqDataDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(seqDataDesc, ObjKind::seq_data, "seqDataDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetSeqDataDescriptor(cudnnSeqDataDescriptor_t seqDataDesc, cudnnDataType_t dataType,
                                                    int nbDims, const int dimA[], const cudnnSeqDataAxis_t axes[],
                                                    size_t seqLengthArraySize, const int seqLengthArray[],
                                                    void* paddingFill) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, seqDataDesc, seq_data);
        return odnn::core::set_seq_data(*d, dataType, nbDims, dimA, axes, seqLengthArraySize, seqLengthArray,
                                        paddingFill);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetSeqDataDescriptor(const cudnnSeqDataDescriptor_t seqDataDesc,
                                                    cudnnDataType_t* dataType, int* nbDims, int nbDimsRequested,
                                                    int dimA[], cudnnSeqDataAxis_t axes[], size_t* seqLengthArraySize,
                                                    size_t seqLengthSizeRequested, int seqLengthArray[],
                                                    void* paddingFill) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, seqDataDesc, seq_data);
        ODNN_REQUIRE_PARAM(nbDimsRequested >= 0, "nbDimsRequested = %d is negative", nbDimsRequested);
        put(dataType, d->data_type);
        put(nbDims, CUDNN_SEQDATA_DIM_COUNT);
        const int n = nbDimsRequested < CUDNN_SEQDATA_DIM_COUNT ? nbDimsRequested : CUDNN_SEQDATA_DIM_COUNT;
        for (int i = 0; i < n; ++i) {
            if (dimA) dimA[i] = d->dims[i];
            if (axes) axes[i] = d->axes[i];
        }
        put(seqLengthArraySize, d->seq_lengths.size());
        if (seqLengthArray) {
            const size_t m =
                seqLengthSizeRequested < d->seq_lengths.size() ? seqLengthSizeRequested : d->seq_lengths.size();
            for (size_t i = 0; i < m; ++i) seqLengthArray[i] = d->seq_lengths[i];
        }
        if (paddingFill) std::memcpy(paddingFill, d->padding_fill, odnn::core::adv_dtype_size(d->data_type));
        return Status::ok();
    });
}

// ---------------------------------------------------------------------------
// Multi-head attention
// ---------------------------------------------------------------------------

cudnnStatus_t CUDNNWINAPI cudnnCreateAttnDescriptor(cudnnAttnDescriptor_t* attnDesc) {
    return guard(__func__, [&] { return odnn::api::create_object(attnDesc, ObjKind::attention, "attnDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyAttnDescriptor(cudnnAttnDescriptor_t attnDesc) {
    return guard(__func__, [&] { return odnn::api::destroy_object(attnDesc, ObjKind::attention, "attnDesc"); });
}

cudnnStatus_t CUDNNWINAPI cudnnSetAttnDescriptor(cudnnAttnDescriptor_t attnDesc, unsigned attnMode, int nHeads,
                                                 double smScaler, cudnnDataType_t dataType, cudnnDataType_t computePrec,
                                                 cudnnMathType_t mathType, cudnnDropoutDescriptor_t attnDropoutDesc,
                                                 cudnnDropoutDescriptor_t postDropoutDesc, int qSize, int kSize,
                                                 int vSize, int qProjSize, int kProjSize, int vProjSize, int oProjSize,
                                                 int qoMaxSeqLength, int kvMaxSeqLength, int maxBatchSize,
                                                 int maxBeamSize) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, attnDesc, attention);
        ODNN_RETURN_IF_ERROR(check_dropout(attnDropoutDesc, "attnDropoutDesc"));
        ODNN_RETURN_IF_ERROR(check_dropout(postDropoutDesc, "postDropoutDesc"));
        const odnn::core::AttnParams p{attnMode,       nHeads,          smScaler,        dataType,   computePrec,
                                       mathType,       attnDropoutDesc, postDropoutDesc, qSize,      kSize,
                                       vSize,          qProjSize,       kProjSize,       vProjSize,  oProjSize,
                                       qoMaxSeqLength, kvMaxSeqLength,  maxBatchSize,    maxBeamSize};
        return odnn::core::set_attn(*d, p);
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetAttnDescriptor(
    cudnnAttnDescriptor_t attnDesc, unsigned* attnMode, int* nHeads, double* smScaler, cudnnDataType_t* dataType,
    cudnnDataType_t* computePrec, cudnnMathType_t* mathType, cudnnDropoutDescriptor_t* attnDropoutDesc,
    cudnnDropoutDescriptor_t* postDropoutDesc, int* qSize, int* kSize, int* vSize, int* qProjSize, int* kProjSize,
    int* vProjSize, int* oProjSize, int* qoMaxSeqLength, int* kvMaxSeqLength, int* maxBatchSize, int* maxBeamSize) {
    return guard(__func__, [&]() -> Status {
        ODNN_LOOKUP(d, attnDesc, attention);
        put(attnMode, d->attn_mode);
        put(nHeads, d->n_heads);
        put(smScaler, d->sm_scaler);
        put(dataType, d->data_type);
        put(computePrec, d->compute_prec);
        put(mathType, d->math_type);
        put(attnDropoutDesc, d->attn_dropout);
        put(postDropoutDesc, d->post_dropout);
        put(qSize, d->q_size);
        put(kSize, d->k_size);
        put(vSize, d->v_size);
        put(qProjSize, d->q_proj_size);
        put(kProjSize, d->k_proj_size);
        put(vProjSize, d->v_proj_size);
        put(oProjSize, d->o_proj_size);
        put(qoMaxSeqLength, d->qo_max_seq_length);
        put(kvMaxSeqLength, d->kv_max_seq_length);
        put(maxBatchSize, d->max_batch_size);
        put(maxBeamSize, d->max_beam_size);
        return Status::ok();
    });
}

cudnnStatus_t CUDNNWINAPI cudnnGetMultiHeadAttnBuffers(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc,
                                                       size_t* weightSizeInBytes, size_t* workSpaceSizeInBytes,
                                                       size_t* reserveSpaceSizeInBytes) {
    return guard(
        __func__,
        [&]() -> Status {
            ODNN_LOOKUP(h, handle, handle);
            ODNN_LOOKUP(d, attnDesc, attention);
            (void)h;
            ODNN_REQUIRE_NOT_NULL(weightSizeInBytes);
            ODNN_REQUIRE_NOT_NULL(workSpaceSizeInBytes);
            // A NULL reserveSpaceSizeInBytes asks for the inference sizes. An unset
            // descriptor (all sizes 0) needs no buffers.
            size_t ws = 0, rs = 0;
            odnn::core::attn_buffer_sizes(*d, reserveSpaceSizeInBytes != nullptr, &ws, &rs);
            *weightSizeInBytes = odnn::core::attn_weight_bytes(*d);
            *workSpaceSizeInBytes = ws;
            put(reserveSpaceSizeInBytes, rs);
            return Status::ok();
        },
        handle);
}

}  // extern "C"
