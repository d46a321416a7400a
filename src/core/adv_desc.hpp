// Descriptors of the adv sub-library: CTC loss, RNN (v8 API), RNN data, sequence data
// and multi-head attention; the RNN weight-space layout, the RNN temp-space layout
// and the attention buffer sizes. Validation follows what cuDNN 9.19 answers (checked
// against NVIDIA's library by tests/oracle/oracle_adv_desc.cpp), including the order
// of its checks where two problems give different codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.hpp"
#include "cudnn_adv.h"

namespace odnn::core {

// ---------------------------------------------------------------------------
// CTC loss
// ---------------------------------------------------------------------------

// cuDNN keeps the enums as given (it validates only the compute type), so do we:
// the loss functions decide what an out-of-range mode means.
struct CtcLossDesc {
    cudnnDataType_t comp_type = CUDNN_DATA_FLOAT;
    int norm_mode = CUDNN_LOSS_NORMALIZATION_NONE;
    int grad_mode = CUDNN_NOT_PROPAGATE_NAN;  // cudnnNanPropagation_t as given to the v7/v8 setters
    int max_label_length = 0;

    // The v9 view of grad_mode: NOT_PROPAGATE_NAN reads as ZERO_OOB, anything else SKIP_OOB.
    cudnnCTCGradMode_t ctc_grad_mode() const {
        return grad_mode == CUDNN_NOT_PROPAGATE_NAN ? CUDNN_CTC_ZERO_OOB_GRADIENTS : CUDNN_CTC_SKIP_OOB_GRADIENTS;
    }
};

// Every setter version stores all four fields (the older ones with zeros for those
// they lack). Only FLOAT and DOUBLE compute types are supported.
Status set_ctc_loss(CtcLossDesc& d, cudnnDataType_t comp_type, int norm_mode, int grad_mode, int max_label_length);
// The v9 setter: ZERO_OOB is stored as NOT_PROPAGATE_NAN, any other value as PROPAGATE_NAN.
int ctc_grad_mode_to_nan_opt(cudnnCTCGradMode_t mode);

// ---------------------------------------------------------------------------
// RNN
// ---------------------------------------------------------------------------

struct RnnDesc {
    bool is_set = false;  // cudnnGetRNNDescriptor_v8 answers NOT_INITIALIZED until a set succeeds
    cudnnRNNAlgo_t algo = CUDNN_RNN_ALGO_STANDARD;
    cudnnRNNMode_t cell_mode = CUDNN_RNN_RELU;
    cudnnRNNBiasMode_t bias_mode = CUDNN_RNN_NO_BIAS;
    cudnnDirectionMode_t dir_mode = CUDNN_UNIDIRECTIONAL;
    cudnnRNNInputMode_t input_mode = CUDNN_LINEAR_INPUT;
    cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
    cudnnDataType_t math_prec = CUDNN_DATA_FLOAT;
    cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
    int32_t input_size = 0;
    int32_t hidden_size = 0;
    int32_t proj_size = 0;
    int32_t num_layers = 0;
    cudnnDropoutDescriptor_t dropout = nullptr;  // not owned; NULL means no dropout
    uint32_t aux_flags = 0;
    // LSTM cell clipping. cuDNN validates only the bounds, so mode and NaN option are
    // kept as given; a successful cudnnSetRNNDescriptor_v8 resets all four.
    int clip_mode = CUDNN_RNN_CLIP_NONE;
    int clip_nan_opt = CUDNN_NOT_PROPAGATE_NAN;
    double lclip = 0.0;
    double rclip = 0.0;

    // Gates per cell: 1 (RELU, TANH), 4 (LSTM), 3 (GRU).
    int gates() const;
    int dirs() const { return dir_mode == CUDNN_BIDIRECTIONAL ? 2 : 1; }
    int pseudo_layers() const { return num_layers * dirs(); }
    bool has_projection() const { return cell_mode == CUDNN_LSTM && proj_size < hidden_size; }
};

struct RnnV8Params {
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell_mode;
    cudnnRNNBiasMode_t bias_mode;
    cudnnDirectionMode_t dir_mode;
    cudnnRNNInputMode_t input_mode;
    cudnnDataType_t data_type;
    cudnnDataType_t math_prec;
    cudnnMathType_t math_type;
    int32_t input_size;
    int32_t hidden_size;
    int32_t proj_size;
    int32_t num_layers;
    cudnnDropoutDescriptor_t dropout;
    uint32_t aux_flags;
};

Status set_rnn_v8(RnnDesc& d, const RnnV8Params& p);
Status set_rnn_clip(RnnDesc& d, int clip_mode, int clip_nan_opt, double lclip, double rclip);

// The weight space (cudnnGetRNNWeightSpaceSize / cudnnGetRNNWeightParams), packed with
// no padding, in elements of the RNN's data type. It is cuDNN's own layout (checked
// against NVIDIA's library on the GPU machine), and it keeps each half of the gate
// matrices and biases contiguous in linLayerID order, which PyTorch asserts:
//
//   [ matrix region ]  for each pseudo-layer pl = layer * dirs + direction, in order:
//        W_0 .. W_{g-1}   input matrices, linLayerID 0..g-1,   each hidden x in_cols
//                         (absent on layer 0 with CUDNN_SKIP_INPUT)
//        R_0 .. R_{g-1}   recurrent matrices, linLayerID g..2g-1, each hidden x proj
//        P                LSTM projection, linLayerID 2g (= 8),   proj x hidden
//                         (only when projSize < hiddenSize)
//   [ bias region ]    for each pseudo-layer, in the same order:
//        bW_0 .. bW_{g-1} input biases, linLayerID 0..g-1   (DOUBLE_BIAS, SINGLE_INP_BIAS;
//                         present on layer 0 even with CUDNN_SKIP_INPUT)
//        bR_0 .. bR_{g-1} recurrent biases, linLayerID g..2g-1 (DOUBLE_BIAS, SINGLE_REC_BIAS)
//
// g = gates(); in_cols = inputSize on layer 0, projSize * dirs above it (projSize ==
// hiddenSize without projection). Gate order within a half: LSTM i, f, g(cell), o;
// GRU r, z(update), h(new). A matrix is reported as a 3-D tensor {1, rows, cols} with
// packed strides, a bias as {1, rows, 1}.
struct RnnWeightRegion {
    bool present = false;
    int64_t offset = 0;  // elements from the start of the weight space
    int64_t rows = 0;
    int64_t cols = 0;  // 1 for a bias
    int64_t elements() const { return rows * cols; }
};

// Size in bytes of the weight space of a set descriptor.
size_t rnn_weight_space_bytes(const RnnDesc& d);
// Matrix and bias of (pseudoLayer, linLayerID): BAD_PARAM for a pseudo-layer outside
// [0, pseudo_layers()) or an id outside [0, 2g] (2g is the projection slot, present
// only with a projection); an id that names nothing gives two absent regions.
Status rnn_weight_params(const RnnDesc& d, int pseudo_layer, int lin_layer_id, RnnWeightRegion* matrix,
                         RnnWeightRegion* bias);

// ---------------------------------------------------------------------------
// RNN data
// ---------------------------------------------------------------------------

constexpr int kRnnMaxSeqLength = 65535;  // cuDNN answers NOT_SUPPORTED above it

struct RnnDataDesc {
    cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
    cudnnRNNDataLayout_t layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    int max_seq_length = 0;  // 0 until set
    int batch_size = 0;
    int vector_size = 0;
    std::vector<int> seq_lengths;
    unsigned char padding_fill[8] = {};  // one element of data_type, as raw bytes

    bool is_set() const { return max_seq_length > 0; }
};

// seq_lengths holds batch_size entries; padding_fill, when not NULL, one element of
// data_type (its bytes are copied).
Status set_rnn_data(RnnDataDesc& d, cudnnDataType_t data_type, cudnnRNNDataLayout_t layout, int max_seq_length,
                    int batch_size, int vector_size, const int* seq_lengths, const void* padding_fill);

// Bytes of one element of an RNN / sequence data type (FLOAT, DOUBLE, HALF, BFLOAT16).
size_t adv_dtype_size(cudnnDataType_t t);

// The temp-space layout of odnn's RNN kernels (cudnnGetRNNTempSpaceSizes). Our own,
// not cuDNN's; deterministic, a pure function of the descriptors. With T = the x
// descriptor's maxSeqLength, N = its batchSize, H = hiddenSize, P = projSize,
// D = dirs, g = gates, L = numLayers, "acc" the size of mathPrec and "io" the size of
// dataType, every region starting on a 256-byte boundary:
//
//   workspace (both modes; the backward passes use the same layout)
//     gates     T*N*D*g*H  acc   x-projections of one layer for every step (forward),
//                                gate gradients (backward)
//     io[2]     T*N*D*P    io    ping-pong outputs / input gradients between layers
//     state     4*N*D*H    acc   h, c and their gradients at the current step
//   reserve space (CUDNN_FWD_MODE_TRAINING only; 0 for inference), per layer:
//     y         T*N*D*P    io    the layer's output (the next layer's input)
//     act       T*N*D*g*H  acc   gate activations
//     cell      T*N*D*H    acc   LSTM: cell state; GRU: r * (R_h h + b_Rh)
//     hpre      T*N*D*H    acc   LSTM with projection: h before the projection
//     mask      T*N*D*P    1B    dropout mask of the layer's output (not the last
//                                layer), when a dropout descriptor is attached
//
// Checks that fwd_mode is defined and that x matches the RNN (set, same data type,
// vectorSize == inputSize); either output may be NULL. A descriptor never set gets 0
// and 0 (cuDNN answers SUCCESS there).
Status rnn_temp_space_sizes(const RnnDesc& d, cudnnForwardMode_t fwd_mode, const RnnDataDesc& x,
                            size_t* work_space_bytes, size_t* reserve_space_bytes);

// ---------------------------------------------------------------------------
// Sequence data (multi-head attention)
// ---------------------------------------------------------------------------

struct SeqDataDesc {
    cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
    int dims[CUDNN_SEQDATA_DIM_COUNT] = {};                 // indexed by cudnnSeqDataAxis_t
    cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT] = {};  // outermost first
    std::vector<int> seq_lengths;                           // dims[BATCH] * dims[BEAM] entries
    unsigned char padding_fill[8] = {};

    bool is_set() const { return dims[CUDNN_SEQDATA_VECT_DIM] > 0; }
};

Status set_seq_data(SeqDataDesc& d, cudnnDataType_t data_type, int nb_dims, const int* dims,
                    const cudnnSeqDataAxis_t* axes, size_t seq_length_array_size, const int* seq_lengths,
                    const void* padding_fill);

// ---------------------------------------------------------------------------
// Multi-head attention
// ---------------------------------------------------------------------------

struct AttnDesc {
    unsigned attn_mode = 0;
    int n_heads = 0;  // 0 until set
    double sm_scaler = 0.0;
    cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
    cudnnDataType_t compute_prec = CUDNN_DATA_FLOAT;
    cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
    cudnnDropoutDescriptor_t attn_dropout = nullptr;  // not owned
    cudnnDropoutDescriptor_t post_dropout = nullptr;  // not owned
    int q_size = 0, k_size = 0, v_size = 0;
    int q_proj_size = 0, k_proj_size = 0, v_proj_size = 0, o_proj_size = 0;
    int qo_max_seq_length = 0, kv_max_seq_length = 0;
    int max_batch_size = 0, max_beam_size = 0;

    bool is_set() const { return n_heads > 0; }
    bool has_biases() const { return (attn_mode & CUDNN_ATTN_ENABLE_PROJ_BIASES) != 0; }
};

struct AttnParams {
    unsigned attn_mode;
    int n_heads;
    double sm_scaler;
    cudnnDataType_t data_type;
    cudnnDataType_t compute_prec;
    cudnnMathType_t math_type;
    cudnnDropoutDescriptor_t attn_dropout;
    cudnnDropoutDescriptor_t post_dropout;
    int q_size, k_size, v_size;
    int q_proj_size, k_proj_size, v_proj_size, o_proj_size;
    int qo_max_seq_length, kv_max_seq_length;
    int max_batch_size, max_beam_size;
};

Status set_attn(AttnDesc& d, const AttnParams& p);

// cudnnGetMultiHeadAttnBuffers. The weight size is cuDNN's (the packed Q, K, V, O
// projection matrices, then their biases when enabled, in dataType). Workspace and
// reserve space are odnn's own layout, each region 256-byte aligned, in computePrec
// (B = maxBatchSize * maxBeamSize query rows, Bk = maxBatchSize key rows, h = nHeads,
// Qp/Kp/Vp the projected sizes, or the input sizes where a projection is 0):
//   inference (reserve == NULL): workspace = Q' (B*qo*h*Qp) + K' (Bk*kv*h*Kp)
//     + V' (Bk*kv*h*Vp) + scores (B*h*qo*kv) + context (B*qo*h*Vp)
//   training: reserve = the same five regions (kept for the backward passes) plus a
//     1-byte-per-score dropout mask when an attention dropout descriptor is attached;
//     workspace = their gradients (the same five regions).
size_t attn_weight_bytes(const AttnDesc& d);
// Writes both sizes (reserve 0 for inference).
void attn_buffer_sizes(const AttnDesc& d, bool training, size_t* work_space_bytes, size_t* reserve_space_bytes);

}  // namespace odnn::core

struct cudnnCTCLossStruct final : odnn::core::CtcLossDesc {};
struct cudnnRNNStruct final : odnn::core::RnnDesc {};
struct cudnnRNNDataStruct final : odnn::core::RnnDataDesc {};
struct cudnnSeqDataStruct final : odnn::core::SeqDataDesc {};
struct cudnnAttnStruct final : odnn::core::AttnDesc {};
