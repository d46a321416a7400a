// Tensor and filter descriptors: shapes, strides, data type, and the validation
// cuDNN 9 applies when they are set.
#pragma once

#include <cstdint>

#include "cudnn_ops.h"
#include "core/status.hpp"

namespace odnn::core {

constexpr int kDimMax = CUDNN_DIM_MAX;  // 8
// cuDNN's limit on the elements of one legacy tensor (2 Giga-elements).
constexpr int64_t kMaxTensorElements = (int64_t{1} << 31) - 1;

struct TensorDesc {
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
    int nb_dims = 0;  // 0 until a Set call succeeds
    int64_t dims[kDimMax] = {};
    int64_t strides[kDimMax] = {};
    cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;  // as given to the 4d / NdEx setters
    // NCHW_VECT_C: dims count scalars (C is the full channel count) but strides count
    // vectors of vect_count channels, as cuDNN reports them.
    int vect_count = 1;

    bool is_set() const { return nb_dims > 0; }
    int64_t num_elements() const;
    // Elements from the first to the last addressed one, inclusive.
    int64_t span_elements() const;
    size_t size_in_bytes() const;
};

// A tensor seen as scalars: vector types (INT8x4, UINT8x4, INT8x32) get a trailing
// dim for the lanes and strides in scalar units. What element-wise kernels walk.
struct ScalarView {
    cudnnDataType_t dtype;  // INT8 / UINT8 for vector types, else the tensor's type
    int nb_dims;
    int64_t dims[kDimMax + 1];
    int64_t strides[kDimMax + 1];
    int64_t num_elements() const;
};
ScalarView scalar_view(const TensorDesc& d);

// All setters validate fully before they touch `d`: a failed set leaves it unchanged.
Status set_tensor_4d(TensorDesc& d, cudnnTensorFormat_t format, cudnnDataType_t dtype, int n, int c, int h, int w);
Status set_tensor_4d_ex(TensorDesc& d, cudnnDataType_t dtype, int n, int c, int h, int w, int ns, int cs, int hs,
                        int ws);
Status set_tensor_nd(TensorDesc& d, cudnnDataType_t dtype, int nb_dims, const int* dims, const int* strides);
Status set_tensor_nd_ex(TensorDesc& d, cudnnTensorFormat_t format, cudnnDataType_t dtype, int nb_dims,
                        const int* dims);

// Packed strides for `format` (NCHW: row-major; NHWC: channels innermost).
void packed_strides(cudnnTensorFormat_t format, int nb_dims, const int64_t* dims, int64_t* strides);

struct FilterDesc {
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
    cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
    int nb_dims = 0;  // 0 until set; dims are K, C, (D), H, W
    int64_t dims[kDimMax] = {};

    bool is_set() const { return nb_dims > 0; }
    int64_t num_elements() const;
    size_t size_in_bytes() const;
};

Status set_filter_nd(FilterDesc& f, cudnnDataType_t dtype, cudnnTensorFormat_t format, int nb_dims, const int* dims);

}  // namespace odnn::core

struct cudnnTensorStruct final : odnn::core::TensorDesc {};
struct cudnnFilterStruct final : odnn::core::FilterDesc {};
