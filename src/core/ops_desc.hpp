// The small legacy descriptors of cudnn_ops: activation, pooling, LRN, op-tensor,
// reduce-tensor, tensor transform, dropout and spatial transformer. Each holds what
// its Set call was given; the rules of what a Set accepts are cuDNN 9.19's, measured
// against NVIDIA's library (tests/oracle/oracle_ops_desc.cpp). Unlike NVIDIA's, every
// setter here validates fully before it writes: a failed Set leaves the descriptor as
// it was.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/handle.hpp"
#include "core/status.hpp"
#include "core/tensor_desc.hpp"
#include "cudnn_ops.h"

namespace odnn::core {

// ---- Activation ----

struct ActivationDesc {
    cudnnActivationMode_t mode = CUDNN_ACTIVATION_SIGMOID;
    cudnnNanPropagation_t nan_opt = CUDNN_NOT_PROPAGATE_NAN;
    double coef = 0.0;        // clipping ceiling (CLIPPED_RELU) or alpha (ELU); any value is kept
    double swish_beta = 1.0;  // set only by cudnnSetActivationDescriptorSwishBeta
};

Status set_activation(ActivationDesc& d, cudnnActivationMode_t mode, cudnnNanPropagation_t nan_opt, double coef);

// ---- Pooling ----

constexpr int kMaxPoolingDims = kDimMax - 2;  // 6 spatial dims

struct PoolingDesc {
    cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
    cudnnNanPropagation_t nan_opt = CUDNN_NOT_PROPAGATE_NAN;
    int nb_dims = 0;  // spatial dims; 0 until set
    // Like cuDNN, a Set writes only its first nb_dims entries and a Get copies as many
    // as asked for (up to kMaxPoolingDims): entries past nb_dims keep older values.
    int windows[kMaxPoolingDims] = {};
    int pads[kMaxPoolingDims] = {};
    int strides[kMaxPoolingDims] = {};

    bool is_set() const { return nb_dims > 0; }
};

Status set_pooling_nd(PoolingDesc& d, cudnnPoolingMode_t mode, cudnnNanPropagation_t nan_opt, int nb_dims,
                      const int* windows, const int* pads, const int* strides);

// y dims (N, C, out spatial...) for x; nb_dims_out must equal x's rank, which must be
// the pooling rank + 2. On a bad spatial size it fails having written N, C and the
// dims before the offending one, as cuDNN does.
Status pooling_forward_output_dims(const PoolingDesc& d, const TensorDesc& x, int nb_dims_out, int* out);

// ---- LRN ----

struct LrnDesc {
    unsigned n = 5;
    double alpha = 1e-4;
    double beta = 0.75;
    double k = 2.0;
};

Status set_lrn(LrnDesc& d, unsigned n, double alpha, double beta, double k);

// ---- Op-tensor and reduce-tensor ----

struct OpTensorDesc {
    cudnnOpTensorOp_t op = CUDNN_OP_TENSOR_ADD;
    cudnnDataType_t comp_type = CUDNN_DATA_FLOAT;
    cudnnNanPropagation_t nan_opt = CUDNN_NOT_PROPAGATE_NAN;
};

Status set_op_tensor(OpTensorDesc& d, cudnnOpTensorOp_t op, cudnnDataType_t comp_type, cudnnNanPropagation_t nan_opt);

struct ReduceTensorDesc {
    cudnnReduceTensorOp_t op = CUDNN_REDUCE_TENSOR_ADD;
    cudnnDataType_t comp_type = CUDNN_DATA_FLOAT;
    cudnnNanPropagation_t nan_opt = CUDNN_NOT_PROPAGATE_NAN;
    cudnnReduceTensorIndices_t indices = CUDNN_REDUCE_TENSOR_NO_INDICES;
    cudnnIndicesType_t indices_type = CUDNN_32BIT_INDICES;
};

Status set_reduce_tensor(ReduceTensorDesc& d, cudnnReduceTensorOp_t op, cudnnDataType_t comp_type,
                         cudnnNanPropagation_t nan_opt, cudnnReduceTensorIndices_t indices,
                         cudnnIndicesType_t indices_type);

// ---- Tensor transform ----

constexpr uint32_t kMinTransformDims = 2;
constexpr uint32_t kMaxTransformDims = kDimMax;                 // 8
constexpr uint32_t kMaxTransformFolds = kMaxTransformDims - 2;  // one fold per spatial dim

struct TensorTransformDesc {
    uint32_t nb_dims = 0;  // 0 until set
    cudnnTensorFormat_t dest_format = CUDNN_TENSOR_NCHW;
    cudnnFoldingDirection_t direction = CUDNN_TRANSFORM_FOLD;
    // As in cuDNN: a Set writes the first nb_dims pads (nb_dims - 2 folds) of the
    // arrays it is given, skips a NULL array, and keeps older entries past nb_dims.
    int32_t pad_before[kMaxTransformDims] = {};
    int32_t pad_after[kMaxTransformDims] = {};
    uint32_t fold[kMaxTransformFolds] = {};

    bool is_set() const { return nb_dims != 0; }
};

Status set_tensor_transform(TensorTransformDesc& d, uint32_t nb_dims, cudnnTensorFormat_t dest_format,
                            const int32_t* pad_before, const int32_t* pad_after, const uint32_t* fold,
                            cudnnFoldingDirection_t direction);

// ---- Dropout ----

// The RNG state odnn keeps in the caller's states buffer (cuDNN's layout is private;
// this one is ours). The generator is counter-based (Philox-style: the mask bit of
// element i in a call is a pure function of seed and offset + i), so the same seed
// always gives the same sequence of masks, on either backend, and restoring a states
// buffer continues where it was. Dropout forward reads `offset`, and advances it by
// the elements it drew.
struct DropoutStates {
    uint64_t magic;     // kDropoutStatesMagic: written by cudnnSetDropoutDescriptor
    uint32_t version;   // kDropoutStatesVersion
    uint32_t reserved;  // 0
    uint64_t seed;
    uint64_t offset;  // counter of the next draw; 0 after a Set
    uint64_t check;   // dropout_states_check(seed): tells initialised states from garbage
    uint64_t pad[3];  // 0; room for later fields
};
static_assert(sizeof(DropoutStates) == 64, "the dropout states header is 64 bytes");

constexpr uint64_t kDropoutStatesMagic = 0x504f52444e4e444full;  // "ODNNDROP" little-endian
constexpr uint32_t kDropoutStatesVersion = 1;
constexpr size_t kDropoutStatesBytes = sizeof(DropoutStates);

uint64_t dropout_states_check(uint64_t seed);
DropoutStates make_dropout_states(uint64_t seed);

struct DropoutDesc {
    float dropout = 0.0f;
    void* states = nullptr;  // caller-owned; NULL is allowed (no RNG attached)
    size_t states_bytes = 0;
    unsigned long long seed = 0;
};

// Bytes of states a handle's dropout needs (the same on every backend).
size_t dropout_states_size(const Handle& h);
// One mask bit per element, in 32-bit words: cuDNN's size for the same tensor.
StatusOr<size_t> dropout_reserve_space_size(const TensorDesc& x);
// Records the arguments and, when states is not NULL, initialises it from the seed on
// the handle's backend (in stream order on CUDA).
Status set_dropout(DropoutDesc& d, const Handle& h, float dropout, void* states, size_t states_bytes,
                   unsigned long long seed);
// Records the arguments without touching the states (they were initialised before).
Status restore_dropout(DropoutDesc& d, const Handle& h, float dropout, void* states, size_t states_bytes,
                       unsigned long long seed);

// ---- Spatial transformer ----

struct SpatialTransformerDesc {
    cudnnSamplerType_t sampler = CUDNN_SAMPLER_BILINEAR;
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
    int nb_dims = 0;  // 0 until set
    int dims[kDimMax] = {};

    bool is_set() const { return nb_dims > 0; }
};

Status set_spatial_transformer_nd(SpatialTransformerDesc& d, cudnnSamplerType_t sampler, cudnnDataType_t dtype,
                                  int nb_dims, const int* dims);

}  // namespace odnn::core

struct cudnnActivationStruct final : odnn::core::ActivationDesc {};
struct cudnnPoolingStruct final : odnn::core::PoolingDesc {};
struct cudnnLRNStruct final : odnn::core::LrnDesc {};
struct cudnnOpTensorStruct final : odnn::core::OpTensorDesc {};
struct cudnnReduceTensorStruct final : odnn::core::ReduceTensorDesc {};
struct cudnnTensorTransformStruct final : odnn::core::TensorTransformDesc {};
struct cudnnDropoutStruct final : odnn::core::DropoutDesc {};
struct cudnnSpatialTransformerStruct final : odnn::core::SpatialTransformerDesc {};
