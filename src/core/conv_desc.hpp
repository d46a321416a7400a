// Convolution descriptor: padding, stride, dilation per spatial dim, mode, compute
// type, groups, math type, reorder type; and the output-shape rule.
#pragma once

#include <cstdint>

#include "cudnn_cnn.h"
#include "core/status.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

constexpr int kMaxConvSpatialDims = kDimMax - 2;  // 6

struct ConvDesc {
    int nb_spatial = 0;  // 0 until set
    int pads[kMaxConvSpatialDims] = {};
    int strides[kMaxConvSpatialDims] = {};
    int dilations[kMaxConvSpatialDims] = {};
    cudnnConvolutionMode_t mode = CUDNN_CONVOLUTION;  // cuDNN's default
    cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
    int group_count = 1;
    cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
    cudnnReorderType_t reorder_type = CUDNN_DEFAULT_REORDER;

    bool is_set() const { return nb_spatial > 0; }
};

Status set_conv_nd(ConvDesc& c, int array_length, const int* pads, const int* strides, const int* dilations,
                   cudnnConvolutionMode_t mode, cudnnDataType_t compute_type);
Status set_conv_group_count(ConvDesc& c, int groups);
Status set_conv_math_type(ConvDesc& c, cudnnMathType_t math);
Status set_conv_reorder_type(ConvDesc& c, cudnnReorderType_t reorder);

// y dims for x (N, C, spatial...) and w (K, C/groups, spatial...): N, K, out spatial...
Status conv_forward_output_dims(const ConvDesc& c, const TensorDesc& x, const FilterDesc& w, int nb_dims_out,
                                int* out_dims);

}  // namespace odnn::core

struct cudnnConvolutionStruct final : odnn::core::ConvDesc {};
