#include "core/adv_desc.hpp"

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "core/dtype.hpp"

namespace odnn::core {

namespace {

// cudnnDataType_t values this API level defines (FLOAT .. COMPLEX_FP64). The adv
// setters answer BAD_PARAM outside this range and NOT_SUPPORTED for a defined type
// they cannot use.
constexpr int kLastDataType = 21;
bool dtype_in_range(cudnnDataType_t t) { return static_cast<int>(t) >= 0 && static_cast<int>(t) <= kLastDataType; }

bool is_rnn_io_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

const char* dt_name(cudnnDataType_t t) { return dtype_is_known(t) ? dtype_name(t) : "(undefined)"; }

constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return n > SIZE_MAX - kAlign ? SIZE_MAX : (n + kAlign - 1) / kAlign * kAlign; }

// Saturating helpers: sizes come from int descriptor fields whose products can
// exceed 64 bits in pathological cases; a saturated size is never allocatable.
size_t mul_sat(size_t a, size_t b) {
    if (a != 0 && b > SIZE_MAX / a) return SIZE_MAX;
    return a * b;
}
size_t add_sat(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
size_t region(std::initializer_list<size_t> factors) {
    size_t n = 1;
    for (size_t f : factors) n = mul_sat(n, f);
    return align_up(n);
}

}  // namespace

size_t adv_dtype_size(cudnnDataType_t t) {
    switch (t) {
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF:
        case CUDNN_DATA_BFLOAT16: return 2;
        default: return 4;
    }
}

// ---------------------------------------------------------------------------
// CTC loss
// ---------------------------------------------------------------------------

Status set_ctc_loss(CtcLossDesc& d, cudnnDataType_t comp_type, int norm_mode, int grad_mode, int max_label_length) {
    ODNN_REQUIRE_SUPPORTED(comp_type == CUDNN_DATA_FLOAT || comp_type == CUDNN_DATA_DOUBLE,
                           "compType %s (%d): the CTC loss computes in FLOAT or DOUBLE", dt_name(comp_type),
                           static_cast<int>(comp_type));
    d.comp_type = comp_type;
    d.norm_mode = norm_mode;
    d.grad_mode = grad_mode;
    d.max_label_length = max_label_length;
    return Status::ok();
}

int ctc_grad_mode_to_nan_opt(cudnnCTCGradMode_t mode) {
    return mode == CUDNN_CTC_ZERO_OOB_GRADIENTS ? CUDNN_NOT_PROPAGATE_NAN : CUDNN_PROPAGATE_NAN;
}

// ---------------------------------------------------------------------------
// RNN
// ---------------------------------------------------------------------------

int RnnDesc::gates() const {
    switch (cell_mode) {
        case CUDNN_LSTM: return 4;
        case CUDNN_GRU: return 3;
        default: return 1;
    }
}

Status set_rnn_v8(RnnDesc& d, const RnnV8Params& p) {
    // cuDNN's order: most argument ranges (BAD_PARAM), then the bias mode of the
    // persistent algorithms (NOT_SUPPORTED), then projSize and auxFlags (BAD_PARAM),
    // then the unsupported combinations (NOT_SUPPORTED).
    const int algo = p.algo;
    ODNN_REQUIRE_PARAM(algo >= CUDNN_RNN_ALGO_STANDARD && algo <= CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H,
                       "algo %d is not a cudnnRNNAlgo_t value", algo);
    ODNN_REQUIRE_PARAM(p.cell_mode >= CUDNN_RNN_RELU && p.cell_mode <= CUDNN_GRU,
                       "cellMode %d is not a cudnnRNNMode_t value", static_cast<int>(p.cell_mode));
    ODNN_REQUIRE_PARAM(p.bias_mode >= CUDNN_RNN_NO_BIAS && p.bias_mode <= CUDNN_RNN_SINGLE_REC_BIAS,
                       "biasMode %d is not a cudnnRNNBiasMode_t value", static_cast<int>(p.bias_mode));
    ODNN_REQUIRE_PARAM(p.dir_mode == CUDNN_UNIDIRECTIONAL || p.dir_mode == CUDNN_BIDIRECTIONAL,
                       "dirMode %d is not a cudnnDirectionMode_t value", static_cast<int>(p.dir_mode));
    ODNN_REQUIRE_PARAM(p.input_mode == CUDNN_LINEAR_INPUT || p.input_mode == CUDNN_SKIP_INPUT,
                       "inputMode %d is not a cudnnRNNInputMode_t value", static_cast<int>(p.input_mode));
    ODNN_REQUIRE_PARAM(p.math_type >= CUDNN_DEFAULT_MATH && p.math_type <= CUDNN_FMA_MATH,
                       "mathType %d is not a cudnnMathType_t value", static_cast<int>(p.math_type));
    ODNN_REQUIRE_PARAM(p.input_size > 0, "inputSize = %d: must be positive", p.input_size);
    ODNN_REQUIRE_PARAM(p.hidden_size > 0, "hiddenSize = %d: must be positive", p.hidden_size);
    ODNN_REQUIRE_PARAM(p.num_layers > 0, "numLayers = %d: must be positive", p.num_layers);
    const bool persistent = p.algo != CUDNN_RNN_ALGO_STANDARD;
    ODNN_REQUIRE_SUPPORTED(!persistent || p.bias_mode == CUDNN_RNN_DOUBLE_BIAS,
                           "the persistent RNN algorithms need biasMode CUDNN_RNN_DOUBLE_BIAS");
    ODNN_REQUIRE_PARAM(p.proj_size > 0, "projSize = %d: must be positive (equal to hiddenSize for no projection)",
                       p.proj_size);
    ODNN_REQUIRE_PARAM((p.aux_flags & ~CUDNN_RNN_PADDED_IO_ENABLED) == 0,
                       "auxFlags 0x%x: only CUDNN_RNN_PADDED_IO_ENABLED (0x1) is defined", p.aux_flags);
    ODNN_REQUIRE_SUPPORTED(p.cell_mode == CUDNN_LSTM || p.proj_size == p.hidden_size,
                           "projSize %d != hiddenSize %d: only LSTM cells have a recurrent projection", p.proj_size,
                           p.hidden_size);
    const cudnnDataType_t dt = p.data_type, mp = p.math_prec;
    const bool types_ok = (dt == CUDNN_DATA_FLOAT && mp == CUDNN_DATA_FLOAT) ||
                          (dt == CUDNN_DATA_DOUBLE && mp == CUDNN_DATA_DOUBLE) ||
                          (dt == CUDNN_DATA_HALF && (mp == CUDNN_DATA_HALF || mp == CUDNN_DATA_FLOAT)) ||
                          (dt == CUDNN_DATA_BFLOAT16 && mp == CUDNN_DATA_FLOAT);
    ODNN_REQUIRE_SUPPORTED(types_ok,
                           "dataType %s (%d) with mathPrec %s (%d): supported are FLOAT/FLOAT, DOUBLE/DOUBLE, "
                           "HALF/HALF, HALF/FLOAT and BFLOAT16/FLOAT",
                           dt_name(dt), static_cast<int>(dt), dt_name(mp), static_cast<int>(mp));
    ODNN_REQUIRE_SUPPORTED(p.proj_size <= p.hidden_size, "projSize %d > hiddenSize %d", p.proj_size, p.hidden_size);
    if (persistent) {
        ODNN_REQUIRE_SUPPORTED(p.proj_size == p.hidden_size,
                               "the persistent RNN algorithms do not support a recurrent projection");
        ODNN_REQUIRE_SUPPORTED(mp != CUDNN_DATA_HALF, "the persistent RNN algorithms do not compute in HALF");
        ODNN_REQUIRE_SUPPORTED(p.algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC || dt != CUDNN_DATA_DOUBLE,
                               "of the persistent RNN algorithms only PERSIST_DYNAMIC supports DOUBLE");
    }
    RnnDesc t;
    t.is_set = true;
    t.algo = p.algo;
    t.cell_mode = p.cell_mode;
    t.bias_mode = p.bias_mode;
    t.dir_mode = p.dir_mode;
    t.input_mode = p.input_mode;
    t.data_type = dt;
    t.math_prec = mp;
    t.math_type = p.math_type;
    t.input_size = p.input_size;
    t.hidden_size = p.hidden_size;
    t.proj_size = p.proj_size;
    t.num_layers = p.num_layers;
    t.dropout = p.dropout;
    t.aux_flags = p.aux_flags;
    d = t;  // also resets the clip settings, as cuDNN does
    return Status::ok();
}

Status set_rnn_clip(RnnDesc& d, int clip_mode, int clip_nan_opt, double lclip, double rclip) {
    // NaN bounds fail this test too.
    ODNN_REQUIRE_PARAM(lclip <= rclip, "lclip %g must not exceed rclip %g (and neither may be NaN)", lclip, rclip);
    d.clip_mode = clip_mode;
    d.clip_nan_opt = clip_nan_opt;
    d.lclip = lclip;
    d.rclip = rclip;
    return Status::ok();
}

namespace {

bool has_input_bias(const RnnDesc& d) {
    return d.bias_mode == CUDNN_RNN_DOUBLE_BIAS || d.bias_mode == CUDNN_RNN_SINGLE_INP_BIAS;
}
bool has_rec_bias(const RnnDesc& d) {
    return d.bias_mode == CUDNN_RNN_DOUBLE_BIAS || d.bias_mode == CUDNN_RNN_SINGLE_REC_BIAS;
}

// Columns of the input matrices of a pseudo-layer; 0 when it has none.
int64_t input_cols(const RnnDesc& d, int pseudo_layer) {
    const int layer = pseudo_layer / d.dirs();
    if (layer == 0) return d.input_mode == CUDNN_SKIP_INPUT ? 0 : d.input_size;
    return int64_t{d.proj_size} * d.dirs();
}

int64_t matrix_elements(const RnnDesc& d, int pseudo_layer) {
    const int64_t g = d.gates(), h = d.hidden_size, p = d.proj_size;
    int64_t n = g * h * input_cols(d, pseudo_layer) + g * h * p;
    if (d.has_projection()) n += p * h;
    return n;
}

int64_t bias_elements(const RnnDesc& d) {
    return int64_t{d.gates()} * d.hidden_size * ((has_input_bias(d) ? 1 : 0) + (has_rec_bias(d) ? 1 : 0));
}

}  // namespace

size_t rnn_weight_space_bytes(const RnnDesc& d) {
    int64_t n = 0;
    for (int pl = 0; pl < d.pseudo_layers(); ++pl) n += matrix_elements(d, pl) + bias_elements(d);
    return static_cast<size_t>(n) * adv_dtype_size(d.data_type);
}

Status rnn_weight_params(const RnnDesc& d, int pseudo_layer, int lin_layer_id, RnnWeightRegion* matrix,
                         RnnWeightRegion* bias) {
    const int g = d.gates();
    ODNN_REQUIRE_PARAM(pseudo_layer >= 0 && pseudo_layer < d.pseudo_layers(),
                       "pseudoLayer %d is outside [0, %d) (numLayers %d x %d direction(s))", pseudo_layer,
                       d.pseudo_layers(), d.num_layers, d.dirs());
    ODNN_REQUIRE_PARAM(lin_layer_id >= 0 && lin_layer_id <= 2 * g,
                       "linLayerID %d is outside [0, %d] for a cell with %d gate(s)", lin_layer_id, 2 * g, g);
    *matrix = RnnWeightRegion();
    *bias = RnnWeightRegion();
    int64_t mat_base = 0;
    for (int pl = 0; pl < pseudo_layer; ++pl) mat_base += matrix_elements(d, pl);
    const int64_t in_cols = input_cols(d, pseudo_layer);
    const int64_t h = d.hidden_size, p = d.proj_size;
    if (lin_layer_id < g) {
        if (in_cols > 0) *matrix = {true, mat_base + lin_layer_id * h * in_cols, h, in_cols};
    } else if (lin_layer_id < 2 * g) {
        *matrix = {true, mat_base + g * h * in_cols + (lin_layer_id - g) * h * p, h, p};
    } else if (d.has_projection()) {
        *matrix = {true, mat_base + g * h * in_cols + g * h * p, p, h};
    }
    if (lin_layer_id < 2 * g) {
        int64_t bias_base = 0;
        for (int pl = 0; pl < d.pseudo_layers(); ++pl) bias_base += matrix_elements(d, pl);
        bias_base += pseudo_layer * bias_elements(d);
        const bool input_half = lin_layer_id < g;
        if (input_half && has_input_bias(d)) {
            *bias = {true, bias_base + lin_layer_id * h, h, 1};
        } else if (!input_half && has_rec_bias(d)) {
            const int64_t skip = has_input_bias(d) ? g * h : 0;
            *bias = {true, bias_base + skip + (lin_layer_id - g) * h, h, 1};
        }
    }
    return Status::ok();
}

Status rnn_temp_space_sizes(const RnnDesc& d, cudnnForwardMode_t fwd_mode, const RnnDataDesc& x,
                            size_t* work_space_bytes, size_t* reserve_space_bytes) {
    if (!d.is_set) {
        // cuDNN answers SUCCESS for a descriptor never set; it has nothing to run.
        if (work_space_bytes) *work_space_bytes = 0;
        if (reserve_space_bytes) *reserve_space_bytes = 0;
        return Status::ok();
    }
    ODNN_REQUIRE_PARAM(fwd_mode == CUDNN_FWD_MODE_INFERENCE || fwd_mode == CUDNN_FWD_MODE_TRAINING,
                       "fwdMode %d is not a cudnnForwardMode_t value", static_cast<int>(fwd_mode));
    ODNN_REQUIRE_PARAM(x.is_set(), "xDesc has not been set (call cudnnSetRNNDataDescriptor first)");
    ODNN_REQUIRE_PARAM(x.data_type == d.data_type, "xDesc data type %s differs from the RNN's %s", dt_name(x.data_type),
                       dt_name(d.data_type));
    ODNN_REQUIRE_PARAM(x.vector_size == d.input_size, "xDesc vectorSize %d differs from the RNN's inputSize %d",
                       x.vector_size, d.input_size);
    const size_t t = static_cast<size_t>(x.max_seq_length), n = static_cast<size_t>(x.batch_size);
    const size_t dirs = static_cast<size_t>(d.dirs()), g = static_cast<size_t>(d.gates());
    const size_t h = static_cast<size_t>(d.hidden_size), p = static_cast<size_t>(d.proj_size);
    const size_t acc = adv_dtype_size(d.math_prec), io = adv_dtype_size(d.data_type);
    size_t ws = 0;
    ws = add_sat(ws, region({t, n, dirs, g, h, acc}));
    ws = add_sat(ws, mul_sat(2, region({t, n, dirs, p, io})));
    ws = add_sat(ws, region({4, n, dirs, h, acc}));
    size_t rs = 0;
    if (fwd_mode == CUDNN_FWD_MODE_TRAINING) {
        size_t layer = 0;
        layer = add_sat(layer, region({t, n, dirs, p, io}));
        layer = add_sat(layer, region({t, n, dirs, g, h, acc}));
        if (d.cell_mode == CUDNN_LSTM || d.cell_mode == CUDNN_GRU) layer = add_sat(layer, region({t, n, dirs, h, acc}));
        if (d.has_projection()) layer = add_sat(layer, region({t, n, dirs, h, acc}));
        rs = mul_sat(layer, static_cast<size_t>(d.num_layers));
        if (d.dropout != nullptr && d.num_layers > 1)
            rs = add_sat(rs, mul_sat(region({t, n, dirs, p}), static_cast<size_t>(d.num_layers - 1)));
    }
    ODNN_REQUIRE(ws != SIZE_MAX && rs != SIZE_MAX, CUDNN_STATUS_NOT_SUPPORTED,
                 "the RNN temp space of this problem does not fit in size_t");
    if (work_space_bytes) *work_space_bytes = ws;
    if (reserve_space_bytes) *reserve_space_bytes = rs;
    return Status::ok();
}

// ---------------------------------------------------------------------------
// RNN data
// ---------------------------------------------------------------------------

Status set_rnn_data(RnnDataDesc& d, cudnnDataType_t data_type, cudnnRNNDataLayout_t layout, int max_seq_length,
                    int batch_size, int vector_size, const int* seq_lengths, const void* padding_fill) {
    ODNN_REQUIRE_PARAM(seq_lengths != nullptr, "seqLengthArray is NULL");
    ODNN_REQUIRE_PARAM(dtype_in_range(data_type), "dataType %d is not a cudnnDataType_t value",
                       static_cast<int>(data_type));
    ODNN_REQUIRE_SUPPORTED(is_rnn_io_type(data_type), "dataType %s: RNN data is FLOAT, DOUBLE, HALF or BFLOAT16",
                           dt_name(data_type));
    const int lay = layout;
    ODNN_REQUIRE_PARAM(
        lay >= CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED && lay <= CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
        "layout %d is not a cudnnRNNDataLayout_t value", lay);
    ODNN_REQUIRE_PARAM(max_seq_length > 0, "maxSeqLength = %d: must be positive", max_seq_length);
    ODNN_REQUIRE_PARAM(batch_size > 0, "batchSize = %d: must be positive", batch_size);
    ODNN_REQUIRE_PARAM(vector_size > 0, "vectorSize = %d: must be positive", vector_size);
    ODNN_REQUIRE_SUPPORTED(max_seq_length <= kRnnMaxSeqLength, "maxSeqLength %d exceeds %d", max_seq_length,
                           kRnnMaxSeqLength);
    const bool packed = layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
    for (int i = 0; i < batch_size; ++i) {
        const int len = seq_lengths[i];
        ODNN_REQUIRE_PARAM(len >= (packed ? 1 : 0) && len <= max_seq_length,
                           "seqLengthArray[%d] = %d is outside [%d, maxSeqLength %d]", i, len, packed ? 1 : 0,
                           max_seq_length);
        if (packed) {
            ODNN_REQUIRE_PARAM(i == 0 || len <= seq_lengths[i - 1],
                               "packed layout: seqLengthArray must not increase (entry %d: %d > %d)", i, len,
                               seq_lengths[i - 1]);
            ODNN_REQUIRE_PARAM(i != 0 || len == max_seq_length,
                               "packed layout: seqLengthArray[0] = %d must equal maxSeqLength %d", len, max_seq_length);
        }
    }
    RnnDataDesc t;
    t.data_type = data_type;
    t.layout = layout;
    t.max_seq_length = max_seq_length;
    t.batch_size = batch_size;
    t.vector_size = vector_size;
    t.seq_lengths.assign(seq_lengths, seq_lengths + batch_size);
    if (padding_fill) std::memcpy(t.padding_fill, padding_fill, adv_dtype_size(data_type));
    d = std::move(t);
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Sequence data
// ---------------------------------------------------------------------------

Status set_seq_data(SeqDataDesc& d, cudnnDataType_t data_type, int nb_dims, const int* dims,
                    const cudnnSeqDataAxis_t* axes, size_t seq_length_array_size, const int* seq_lengths,
                    const void* padding_fill) {
    ODNN_REQUIRE_PARAM(dims != nullptr, "dimA is NULL");
    ODNN_REQUIRE_PARAM(axes != nullptr, "axes is NULL");
    ODNN_REQUIRE_PARAM(seq_lengths != nullptr, "seqLengthArray is NULL");
    ODNN_REQUIRE_PARAM(dtype_in_range(data_type), "dataType %d is not a cudnnDataType_t value",
                       static_cast<int>(data_type));
    ODNN_REQUIRE_PARAM(nb_dims > 0, "nbDims = %d: must be CUDNN_SEQDATA_DIM_COUNT (4)", nb_dims);
    ODNN_REQUIRE_SUPPORTED(nb_dims == CUDNN_SEQDATA_DIM_COUNT,
                           "nbDims = %d: only CUDNN_SEQDATA_DIM_COUNT (4) is supported", nb_dims);
    for (int i = 0; i < CUDNN_SEQDATA_DIM_COUNT; ++i)
        ODNN_REQUIRE_PARAM(dims[i] > 0, "dimA[%d] = %d: every dimension must be positive", i, dims[i]);
    bool seen[CUDNN_SEQDATA_DIM_COUNT] = {};
    for (int i = 0; i < CUDNN_SEQDATA_DIM_COUNT; ++i) {
        const int a = axes[i];
        ODNN_REQUIRE_PARAM(a >= 0 && a < CUDNN_SEQDATA_DIM_COUNT, "axes[%d] = %d is not a cudnnSeqDataAxis_t value", i,
                           a);
        ODNN_REQUIRE_PARAM(!seen[a], "axes[%d] = %d repeats an axis", i, a);
        seen[a] = true;
    }
    ODNN_REQUIRE_PARAM(axes[CUDNN_SEQDATA_DIM_COUNT - 1] == CUDNN_SEQDATA_VECT_DIM,
                       "axes[3] = %d: CUDNN_SEQDATA_VECT_DIM must be the innermost axis",
                       static_cast<int>(axes[CUDNN_SEQDATA_DIM_COUNT - 1]));
    const int64_t sequences = int64_t{dims[CUDNN_SEQDATA_BATCH_DIM]} * dims[CUDNN_SEQDATA_BEAM_DIM];
    ODNN_REQUIRE_PARAM(static_cast<uint64_t>(sequences) == seq_length_array_size,
                       "seqLengthArraySize %zu != batch %d x beam %d", seq_length_array_size,
                       dims[CUDNN_SEQDATA_BATCH_DIM], dims[CUDNN_SEQDATA_BEAM_DIM]);
    const int t_max = dims[CUDNN_SEQDATA_TIME_DIM];
    for (int64_t i = 0; i < sequences; ++i)
        ODNN_REQUIRE_PARAM(seq_lengths[i] >= 1 && seq_lengths[i] <= t_max,
                           "seqLengthArray[%lld] = %d is outside [1, time dim %d]", static_cast<long long>(i),
                           seq_lengths[i], t_max);
    // Checked last, like cuDNN (which answers INTERNAL_ERROR here and keeps the new
    // values; odnn answers NOT_SUPPORTED and leaves the descriptor as it was).
    ODNN_REQUIRE_SUPPORTED(is_rnn_io_type(data_type), "dataType %s: sequence data is FLOAT, DOUBLE, HALF or BFLOAT16",
                           dt_name(data_type));
    SeqDataDesc t;
    t.data_type = data_type;
    for (int i = 0; i < CUDNN_SEQDATA_DIM_COUNT; ++i) {
        t.dims[i] = dims[i];
        t.axes[i] = axes[i];
    }
    t.seq_lengths.assign(seq_lengths, seq_lengths + sequences);
    if (padding_fill) std::memcpy(t.padding_fill, padding_fill, adv_dtype_size(data_type));
    d = std::move(t);
    return Status::ok();
}

// ---------------------------------------------------------------------------
// Multi-head attention
// ---------------------------------------------------------------------------

Status set_attn(AttnDesc& d, const AttnParams& p) {
    // cuDNN's order: modes and types (BAD_PARAM), the data/compute type pair
    // (NOT_SUPPORTED), sizes (BAD_PARAM), then the unsupported query map.
    constexpr unsigned kKnownModeBits = CUDNN_ATTN_QUERYMAP_ONE_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES;
    ODNN_REQUIRE_PARAM((p.attn_mode & ~kKnownModeBits) == 0, "attnMode 0x%x has undefined bits", p.attn_mode);
    ODNN_REQUIRE_PARAM(p.n_heads > 0, "nHeads = %d: must be positive", p.n_heads);
    ODNN_REQUIRE_PARAM(!(p.sm_scaler < 0), "smScaler = %g: must not be negative", p.sm_scaler);
    const cudnnDataType_t dt = p.data_type, cp = p.compute_prec;
    ODNN_REQUIRE_PARAM(
        dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_DOUBLE || dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16,
        "dataType %s (%d): attention data is FLOAT, DOUBLE, HALF or BFLOAT16", dt_name(dt), static_cast<int>(dt));
    ODNN_REQUIRE_PARAM(cp == CUDNN_DATA_FLOAT || cp == CUDNN_DATA_DOUBLE || cp == CUDNN_DATA_HALF,
                       "computePrec %s (%d): attention computes in FLOAT, DOUBLE or HALF", dt_name(cp),
                       static_cast<int>(cp));
    ODNN_REQUIRE_PARAM(p.math_type >= CUDNN_DEFAULT_MATH && p.math_type <= CUDNN_FMA_MATH,
                       "mathType %d is not a cudnnMathType_t value", static_cast<int>(p.math_type));
    const bool types_ok = (dt == CUDNN_DATA_FLOAT && cp == CUDNN_DATA_FLOAT) ||
                          (dt == CUDNN_DATA_DOUBLE && cp == CUDNN_DATA_DOUBLE) ||
                          (dt == CUDNN_DATA_HALF && (cp == CUDNN_DATA_HALF || cp == CUDNN_DATA_FLOAT)) ||
                          (dt == CUDNN_DATA_BFLOAT16 && cp == CUDNN_DATA_FLOAT);
    ODNN_REQUIRE_SUPPORTED(types_ok,
                           "dataType %s with computePrec %s: supported are FLOAT/FLOAT, DOUBLE/DOUBLE, "
                           "HALF/HALF, HALF/FLOAT and BFLOAT16/FLOAT",
                           dt_name(dt), dt_name(cp));
    ODNN_REQUIRE_PARAM(p.q_size > 0 && p.k_size > 0 && p.v_size > 0, "qSize %d, kSize %d, vSize %d: must be positive",
                       p.q_size, p.k_size, p.v_size);
    ODNN_REQUIRE_PARAM(p.q_proj_size >= 0 && p.k_proj_size >= 0 && p.v_proj_size >= 0 && p.o_proj_size >= 0,
                       "projection sizes (q %d, k %d, v %d, o %d) must not be negative", p.q_proj_size, p.k_proj_size,
                       p.v_proj_size, p.o_proj_size);
    const int qp = p.q_proj_size > 0 ? p.q_proj_size : p.q_size;
    const int kp = p.k_proj_size > 0 ? p.k_proj_size : p.k_size;
    ODNN_REQUIRE_PARAM(qp == kp, "queries (%d) and keys (%d) must have the same size after their projections", qp, kp);
    ODNN_REQUIRE_PARAM(p.qo_max_seq_length > 0 && p.kv_max_seq_length > 0,
                       "qoMaxSeqLength %d, kvMaxSeqLength %d: must be positive", p.qo_max_seq_length,
                       p.kv_max_seq_length);
    ODNN_REQUIRE_PARAM(p.max_batch_size > 0 && p.max_beam_size > 0, "maxBatchSize %d, maxBeamSize %d: must be positive",
                       p.max_batch_size, p.max_beam_size);
    ODNN_REQUIRE_SUPPORTED((p.attn_mode & CUDNN_ATTN_QUERYMAP_ONE_TO_ONE) == 0,
                           "CUDNN_ATTN_QUERYMAP_ONE_TO_ONE is not supported");
    AttnDesc t;
    t.attn_mode = p.attn_mode;
    t.n_heads = p.n_heads;
    t.sm_scaler = p.sm_scaler;
    t.data_type = dt;
    t.compute_prec = cp;
    t.math_type = p.math_type;
    t.attn_dropout = p.attn_dropout;
    t.post_dropout = p.post_dropout;
    t.q_size = p.q_size;
    t.k_size = p.k_size;
    t.v_size = p.v_size;
    t.q_proj_size = p.q_proj_size;
    t.k_proj_size = p.k_proj_size;
    t.v_proj_size = p.v_proj_size;
    t.o_proj_size = p.o_proj_size;
    t.qo_max_seq_length = p.qo_max_seq_length;
    t.kv_max_seq_length = p.kv_max_seq_length;
    t.max_batch_size = p.max_batch_size;
    t.max_beam_size = p.max_beam_size;
    d = t;
    return Status::ok();
}

size_t attn_weight_bytes(const AttnDesc& d) {
    const size_t h = static_cast<size_t>(d.n_heads);
    const size_t qp = static_cast<size_t>(d.q_proj_size), kp = static_cast<size_t>(d.k_proj_size);
    const size_t vp = static_cast<size_t>(d.v_proj_size), op = static_cast<size_t>(d.o_proj_size);
    // The output projection reads the concatenated heads: Vp per head, or V without
    // a value projection.
    const size_t v_out = vp > 0 ? vp : static_cast<size_t>(d.v_size);
    size_t n = h * qp * static_cast<size_t>(d.q_size) + h * kp * static_cast<size_t>(d.k_size) +
               h * vp * static_cast<size_t>(d.v_size) + op * h * v_out;
    if (d.has_biases()) n += h * qp + h * kp + h * vp + op;
    return n * adv_dtype_size(d.data_type);
}

void attn_buffer_sizes(const AttnDesc& d, bool training, size_t* work_space_bytes, size_t* reserve_space_bytes) {
    const size_t h = static_cast<size_t>(d.n_heads);
    const size_t qp = static_cast<size_t>(d.q_proj_size > 0 ? d.q_proj_size : d.q_size);
    const size_t kp = static_cast<size_t>(d.k_proj_size > 0 ? d.k_proj_size : d.k_size);
    const size_t vp = static_cast<size_t>(d.v_proj_size > 0 ? d.v_proj_size : d.v_size);
    const size_t qo = static_cast<size_t>(d.qo_max_seq_length), kv = static_cast<size_t>(d.kv_max_seq_length);
    const size_t b = mul_sat(static_cast<size_t>(d.max_batch_size), static_cast<size_t>(d.max_beam_size));
    const size_t bk = static_cast<size_t>(d.max_batch_size);
    const size_t acc = adv_dtype_size(d.compute_prec);
    size_t five = 0;
    five = add_sat(five, region({b, qo, h, qp, acc}));
    five = add_sat(five, region({bk, kv, h, kp, acc}));
    five = add_sat(five, region({bk, kv, h, vp, acc}));
    five = add_sat(five, region({b, h, qo, kv, acc}));
    five = add_sat(five, region({b, qo, h, vp, acc}));
    size_t rs = 0;
    if (training) {
        rs = five;
        if (d.attn_dropout != nullptr) rs = add_sat(rs, region({b, h, qo, kv}));
    }
    *work_space_bytes = five;
    *reserve_space_bytes = rs;
}

}  // namespace odnn::core
