#include "core/ops_desc.hpp"

#include <climits>

#include "core/dtype.hpp"
#include "core/memory.hpp"

namespace odnn::core {

namespace {

bool nan_opt_is_known(cudnnNanPropagation_t n) {
    return static_cast<int>(n) == CUDNN_NOT_PROPAGATE_NAN || static_cast<int>(n) == CUDNN_PROPAGATE_NAN;
}

Status check_nan_opt(cudnnNanPropagation_t n, const char* arg) {
    ODNN_REQUIRE_PARAM(nan_opt_is_known(n), "%s = %d is not a cudnnNanPropagation_t value", arg, static_cast<int>(n));
    return Status::ok();
}

}  // namespace

// ---- Activation ----

Status set_activation(ActivationDesc& d, cudnnActivationMode_t mode, cudnnNanPropagation_t nan_opt, double coef) {
    ODNN_REQUIRE_PARAM(
        static_cast<int>(mode) >= CUDNN_ACTIVATION_SIGMOID && static_cast<int>(mode) <= CUDNN_ACTIVATION_SWISH,
        "mode = %d is not a cudnnActivationMode_t value", static_cast<int>(mode));
    ODNN_RETURN_IF_ERROR(check_nan_opt(nan_opt, "reluNanOpt"));
    // cuDNN keeps any coef (negative, NaN, infinite): it only means something for
    // CLIPPED_RELU and ELU, and the math follows it. The swish beta is left alone.
    d.mode = mode;
    d.nan_opt = nan_opt;
    d.coef = coef;
    return Status::ok();
}

// ---- Pooling ----

Status set_pooling_nd(PoolingDesc& d, cudnnPoolingMode_t mode, cudnnNanPropagation_t nan_opt, int nb_dims,
                      const int* windows, const int* pads, const int* strides) {
    ODNN_REQUIRE_SUPPORTED(nb_dims <= kMaxPoolingDims, "nbDims = %d: pooling has at most %d spatial dimensions",
                           nb_dims, kMaxPoolingDims);
    ODNN_REQUIRE_PARAM(nb_dims > 0, "nbDims = %d: pooling needs at least one spatial dimension", nb_dims);
    ODNN_REQUIRE_PARAM(
        static_cast<int>(mode) >= CUDNN_POOLING_MAX && static_cast<int>(mode) <= CUDNN_POOLING_MAX_DETERMINISTIC,
        "mode = %d is not a cudnnPoolingMode_t value", static_cast<int>(mode));
    ODNN_RETURN_IF_ERROR(check_nan_opt(nan_opt, "maxpoolingNanOpt"));
    ODNN_REQUIRE_PARAM(windows && pads && strides, "windowDimA, paddingA and strideA must not be NULL");
    for (int i = 0; i < nb_dims; ++i) {
        ODNN_REQUIRE_PARAM(windows[i] > 0, "window dimension %d is %d: it must be positive", i, windows[i]);
        ODNN_REQUIRE_PARAM(strides[i] > 0, "stride %d is %d: it must be positive", i, strides[i]);
        // Any padding is accepted, negative or wider than the window, as in cuDNN; the
        // output size decides whether a shape works.
    }
    d.mode = mode;
    d.nan_opt = nan_opt;
    d.nb_dims = nb_dims;
    for (int i = 0; i < nb_dims; ++i) {
        d.windows[i] = windows[i];
        d.pads[i] = pads[i];
        d.strides[i] = strides[i];
    }
    return Status::ok();
}

Status pooling_forward_output_dims(const PoolingDesc& d, const TensorDesc& x, int nb_dims_out, int* out) {
    ODNN_REQUIRE_PARAM(d.is_set(), "poolingDesc has not been set");
    ODNN_REQUIRE_PARAM(x.is_set(), "inputTensorDesc has not been set");
    ODNN_REQUIRE_PARAM(x.nb_dims == d.nb_dims + 2,
                       "inputTensorDesc has %d dimensions; a %d-D pooling needs %d (N, C and the spatial dims)",
                       x.nb_dims, d.nb_dims, d.nb_dims + 2);
    ODNN_REQUIRE_PARAM(nb_dims_out == x.nb_dims, "nbDims = %d: the output has %d dimensions", nb_dims_out, x.nb_dims);
    out[0] = static_cast<int>(x.dims[0]);
    out[1] = static_cast<int>(x.dims[1]);
    for (int i = 0; i < d.nb_dims; ++i) {
        // 64-bit: a huge padding gives an error, not a wrapped-around size.
        const int64_t span = x.dims[i + 2] + 2 * int64_t{d.pads[i]} - d.windows[i];
        ODNN_REQUIRE_PARAM(span >= 0, "spatial dim %d: input %lld with padding %d is smaller than the window %d", i,
                           static_cast<long long>(x.dims[i + 2]), d.pads[i], d.windows[i]);
        const int64_t o = 1 + span / d.strides[i];
        ODNN_REQUIRE_PARAM(o <= INT_MAX, "spatial dim %d: the output size %lld does not fit in an int", i,
                           static_cast<long long>(o));
        out[i + 2] = static_cast<int>(o);
    }
    return Status::ok();
}

// ---- LRN ----

Status set_lrn(LrnDesc& d, unsigned n, double alpha, double beta, double k) {
    ODNN_REQUIRE_PARAM(n >= CUDNN_LRN_MIN_N && n <= CUDNN_LRN_MAX_N, "lrnN = %u is outside [%d, %d]", n,
                       CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N);
    // The limits are tested as cuDNN does (a NaN passes them); alpha is free.
    ODNN_REQUIRE_PARAM(!(beta < CUDNN_LRN_MIN_BETA), "lrnBeta = %g is below CUDNN_LRN_MIN_BETA (%g)", beta,
                       CUDNN_LRN_MIN_BETA);
    ODNN_REQUIRE_PARAM(!(k < CUDNN_LRN_MIN_K), "lrnK = %g is below CUDNN_LRN_MIN_K (%g)", k, CUDNN_LRN_MIN_K);
    d.n = n;
    d.alpha = alpha;
    d.beta = beta;
    d.k = k;
    return Status::ok();
}

// ---- Op-tensor and reduce-tensor ----

Status set_op_tensor(OpTensorDesc& d, cudnnOpTensorOp_t op, cudnnDataType_t comp_type, cudnnNanPropagation_t nan_opt) {
    ODNN_REQUIRE_PARAM(static_cast<int>(op) >= CUDNN_OP_TENSOR_ADD && static_cast<int>(op) <= CUDNN_OP_TENSOR_NOT,
                       "opTensorOp = %d is not a cudnnOpTensorOp_t value", static_cast<int>(op));
    ODNN_REQUIRE_PARAM(comp_type == CUDNN_DATA_FLOAT || comp_type == CUDNN_DATA_DOUBLE ||
                           comp_type == CUDNN_DATA_HALF || comp_type == CUDNN_DATA_BFLOAT16,
                       "opTensorCompType = %d: the compute type must be FLOAT, DOUBLE, HALF or BFLOAT16",
                       static_cast<int>(comp_type));
    ODNN_RETURN_IF_ERROR(check_nan_opt(nan_opt, "opTensorNanOpt"));
    d.op = op;
    d.comp_type = comp_type;
    d.nan_opt = nan_opt;
    return Status::ok();
}

Status set_reduce_tensor(ReduceTensorDesc& d, cudnnReduceTensorOp_t op, cudnnDataType_t comp_type,
                         cudnnNanPropagation_t nan_opt, cudnnReduceTensorIndices_t indices,
                         cudnnIndicesType_t indices_type) {
    ODNN_REQUIRE_PARAM(
        static_cast<int>(op) >= CUDNN_REDUCE_TENSOR_ADD && static_cast<int>(op) <= CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS,
        "reduceTensorOp = %d is not a cudnnReduceTensorOp_t value", static_cast<int>(op));
    ODNN_REQUIRE_PARAM(comp_type == CUDNN_DATA_FLOAT || comp_type == CUDNN_DATA_DOUBLE || comp_type == CUDNN_DATA_HALF,
                       "reduceTensorCompType = %d: the compute type must be FLOAT, DOUBLE or HALF",
                       static_cast<int>(comp_type));
    ODNN_RETURN_IF_ERROR(check_nan_opt(nan_opt, "reduceTensorNanOpt"));
    ODNN_REQUIRE_PARAM(static_cast<int>(indices) == CUDNN_REDUCE_TENSOR_NO_INDICES ||
                           static_cast<int>(indices) == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES,
                       "reduceTensorIndices = %d is not a cudnnReduceTensorIndices_t value", static_cast<int>(indices));
    ODNN_REQUIRE_PARAM(
        static_cast<int>(indices_type) >= CUDNN_32BIT_INDICES && static_cast<int>(indices_type) <= CUDNN_8BIT_INDICES,
        "reduceTensorIndicesType = %d is not a cudnnIndicesType_t value", static_cast<int>(indices_type));
    // Like cuDNN, indices are recorded for any op; the reduction decides what they mean.
    d.op = op;
    d.comp_type = comp_type;
    d.nan_opt = nan_opt;
    d.indices = indices;
    d.indices_type = indices_type;
    return Status::ok();
}

// ---- Tensor transform ----

Status set_tensor_transform(TensorTransformDesc& d, uint32_t nb_dims, cudnnTensorFormat_t dest_format,
                            const int32_t* pad_before, const int32_t* pad_after, const uint32_t* fold,
                            cudnnFoldingDirection_t direction) {
    ODNN_REQUIRE_PARAM(nb_dims >= kMinTransformDims, "nbDims = %u: a transform needs at least %u dimensions", nb_dims,
                       kMinTransformDims);
    ODNN_REQUIRE_SUPPORTED(nb_dims <= kMaxTransformDims, "nbDims = %u exceeds CUDNN_DIM_MAX (%u)", nb_dims,
                           kMaxTransformDims);
    // cuDNN answers NOT_SUPPORTED above NCHW_VECT_C but, comparing signed, keeps a
    // negative format; odnn refuses that one as the invalid enum it is.
    ODNN_REQUIRE_PARAM(static_cast<int>(dest_format) >= 0, "destFormat = %d is not a cudnnTensorFormat_t value",
                       static_cast<int>(dest_format));
    ODNN_REQUIRE_SUPPORTED(static_cast<int>(dest_format) <= CUDNN_TENSOR_NCHW_VECT_C,
                           "destFormat = %d is not a cudnnTensorFormat_t value", static_cast<int>(dest_format));
    d.nb_dims = nb_dims;
    d.dest_format = dest_format;
    // As cuDNN: every direction other than FOLD reads back as UNFOLD.
    d.direction = static_cast<int>(direction) == CUDNN_TRANSFORM_FOLD ? CUDNN_TRANSFORM_FOLD : CUDNN_TRANSFORM_UNFOLD;
    for (uint32_t i = 0; i < nb_dims; ++i) {
        if (pad_before) d.pad_before[i] = pad_before[i];
        if (pad_after) d.pad_after[i] = pad_after[i];
    }
    if (fold)
        for (uint32_t i = 0; i + 2 < nb_dims; ++i) d.fold[i] = fold[i];
    return Status::ok();
}

// ---- Dropout ----

uint64_t dropout_states_check(uint64_t seed) {
    // splitmix64 of the seed and the magic: cheap, and garbage rarely matches it.
    uint64_t z = seed ^ kDropoutStatesMagic;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

DropoutStates make_dropout_states(uint64_t seed) {
    DropoutStates s{};
    s.magic = kDropoutStatesMagic;
    s.version = kDropoutStatesVersion;
    s.seed = seed;
    s.offset = 0;
    s.check = dropout_states_check(seed);
    return s;
}

size_t dropout_states_size(const Handle&) { return kDropoutStatesBytes; }

StatusOr<size_t> dropout_reserve_space_size(const TensorDesc& x) {
    // An unset descriptor gets one word, as in cuDNN.
    if (!x.is_set()) return size_t{4};
    ODNN_REQUIRE_SUPPORTED(x.dtype != CUDNN_DATA_INT8, "dropout does not support xDesc of type INT8");
    // Storage elements: NCHW_VECT_C counts vectors, as cuDNN does.
    const int64_t n = x.num_elements() / x.vect_count;
    return static_cast<size_t>((n + 31) / 32 * 4);
}

Status set_dropout(DropoutDesc& d, const Handle& h, float dropout, void* states, size_t states_bytes,
                   unsigned long long seed) {
    // cuDNN keeps any dropout value (negative, above 1, NaN) and lets states be NULL
    // (a descriptor with no RNG, as frameworks set for dropout = 0).
    if (states != nullptr) {
        ODNN_REQUIRE_PARAM(states_bytes >= kDropoutStatesBytes,
                           "stateSizeInBytes = %zu is less than cudnnDropoutGetStatesSize (%zu)", states_bytes,
                           kDropoutStatesBytes);
        const DropoutStates s = make_dropout_states(seed);
        ODNN_RETURN_IF_ERROR(copy_from_host(h, states, &s, sizeof s));
    }
    d.dropout = dropout;
    d.states = states;
    d.states_bytes = states_bytes;
    d.seed = seed;
    return Status::ok();
}

Status restore_dropout(DropoutDesc& d, const Handle&, float dropout, void* states, size_t states_bytes,
                       unsigned long long seed) {
    // cuDNN checks the size even when states is NULL.
    ODNN_REQUIRE_PARAM(states_bytes >= kDropoutStatesBytes,
                       "stateSizeInBytes = %zu is less than cudnnDropoutGetStatesSize (%zu)", states_bytes,
                       kDropoutStatesBytes);
    d.dropout = dropout;
    d.states = states;
    d.states_bytes = states_bytes;
    d.seed = seed;
    return Status::ok();
}

// ---- Spatial transformer ----

Status set_spatial_transformer_nd(SpatialTransformerDesc& d, cudnnSamplerType_t sampler, cudnnDataType_t dtype,
                                  int nb_dims, const int* dims) {
    ODNN_REQUIRE_PARAM(dims != nullptr, "dimA is NULL");
    ODNN_REQUIRE_SUPPORTED(dtype != CUDNN_DATA_INT8, "dataType INT8 is not supported by the spatial transformer");
    ODNN_REQUIRE_PARAM(static_cast<int>(sampler) == CUDNN_SAMPLER_BILINEAR,
                       "samplerType = %d is not a cudnnSamplerType_t value", static_cast<int>(sampler));
    ODNN_REQUIRE_PARAM(dtype == CUDNN_DATA_FLOAT || dtype == CUDNN_DATA_DOUBLE || dtype == CUDNN_DATA_HALF,
                       "dataType = %d: the spatial transformer takes FLOAT, DOUBLE or HALF", static_cast<int>(dtype));
    // cuDNN accepts any nbDims and any dims here; odnn refuses what cannot describe a
    // tensor (and would read past dimA).
    ODNN_REQUIRE_PARAM(nb_dims >= 1 && nb_dims <= kDimMax, "nbDims = %d is outside [1, %d]", nb_dims, kDimMax);
    for (int i = 0; i < nb_dims; ++i)
        ODNN_REQUIRE_PARAM(dims[i] > 0, "dimA[%d] = %d: every dimension must be positive", i, dims[i]);
    d.sampler = sampler;
    d.dtype = dtype;
    d.nb_dims = nb_dims;
    for (int i = 0; i < nb_dims; ++i) d.dims[i] = dims[i];
    return Status::ok();
}

}  // namespace odnn::core
