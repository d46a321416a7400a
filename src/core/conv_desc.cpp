#include "core/conv_desc.hpp"

#include "core/dtype.hpp"

namespace odnn::core {

Status set_conv_nd(ConvDesc& c, int array_length, const int* pads, const int* strides, const int* dilations,
                   cudnnConvolutionMode_t mode, cudnnDataType_t compute_type) {
    ODNN_REQUIRE_PARAM(pads && strides && dilations, "padA, filterStrideA and dilationA must not be NULL");
    ODNN_REQUIRE_PARAM(array_length >= 0, "arrayLength = %d is negative", array_length);
    ODNN_REQUIRE_SUPPORTED(array_length <= kMaxConvSpatialDims, "arrayLength = %d exceeds %d spatial dimensions",
                           array_length, kMaxConvSpatialDims);
    ODNN_REQUIRE_PARAM(mode == CUDNN_CONVOLUTION || mode == CUDNN_CROSS_CORRELATION,
                       "mode %d is not a cudnnConvolutionMode_t value", static_cast<int>(mode));
    // Accumulation types cuDNN accepts for legacy convolutions.
    ODNN_REQUIRE_PARAM(compute_type == CUDNN_DATA_FLOAT || compute_type == CUDNN_DATA_DOUBLE ||
                           compute_type == CUDNN_DATA_HALF || compute_type == CUDNN_DATA_INT32,
                       "computeType %d is not FLOAT, DOUBLE, HALF or INT32", static_cast<int>(compute_type));
    for (int i = 0; i < array_length; ++i) {
        ODNN_REQUIRE_PARAM(pads[i] >= 0, "padA[%d] = %d must not be negative", i, pads[i]);
        ODNN_REQUIRE_PARAM(strides[i] > 0, "filterStrideA[%d] = %d must be positive", i, strides[i]);
        ODNN_REQUIRE_PARAM(dilations[i] > 0, "dilationA[%d] = %d must be positive", i, dilations[i]);
    }
    ConvDesc t = c;  // group count, math and reorder types survive a re-set
    t.nb_spatial = array_length;
    for (int i = 0; i < array_length; ++i) {
        t.pads[i] = pads[i];
        t.strides[i] = strides[i];
        t.dilations[i] = dilations[i];
    }
    t.mode = mode;
    t.compute_type = compute_type;
    c = t;
    return Status::ok();
}

Status set_conv_group_count(ConvDesc& c, int groups) {
    ODNN_REQUIRE_PARAM(groups > 0, "groupCount = %d must be positive", groups);
    c.group_count = groups;
    return Status::ok();
}

Status set_conv_math_type(ConvDesc& c, cudnnMathType_t math) {
    ODNN_REQUIRE_PARAM(math == CUDNN_DEFAULT_MATH || math == CUDNN_TENSOR_OP_MATH ||
                           math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION || math == CUDNN_FMA_MATH,
                       "mathType %d is not a cudnnMathType_t value", static_cast<int>(math));
    c.math_type = math;
    return Status::ok();
}

Status set_conv_reorder_type(ConvDesc& c, cudnnReorderType_t reorder) {
    ODNN_REQUIRE_PARAM(reorder == CUDNN_DEFAULT_REORDER || reorder == CUDNN_NO_REORDER,
                       "reorderType %d is not a cudnnReorderType_t value", static_cast<int>(reorder));
    c.reorder_type = reorder;
    return Status::ok();
}

Status conv_forward_output_dims(const ConvDesc& c, const TensorDesc& x, const FilterDesc& w, int nb_dims_out,
                                int* out_dims) {
    ODNN_REQUIRE_PARAM(c.is_set(), "the convolution descriptor has not been set");
    ODNN_REQUIRE_PARAM(x.is_set(), "inputTensorDesc has not been set");
    ODNN_REQUIRE_PARAM(w.is_set(), "filterDesc has not been set");
    ODNN_REQUIRE_PARAM(x.nb_dims == w.nb_dims, "inputTensorDesc has %d dims but filterDesc has %d", x.nb_dims,
                       w.nb_dims);
    ODNN_REQUIRE_PARAM(x.nb_dims == c.nb_spatial + 2,
                       "the tensors have %d dims but the convolution descriptor has %d spatial dims (expects %d)",
                       x.nb_dims, c.nb_spatial, c.nb_spatial + 2);
    ODNN_REQUIRE_PARAM(nb_dims_out >= 0 && nb_dims_out <= x.nb_dims,
                       "nbDims = %d is outside [0, %d] (the input tensor's rank)", nb_dims_out, x.nb_dims);
    ODNN_REQUIRE_PARAM(x.dims[1] == w.dims[1] * c.group_count,
                       "input channels (%lld) != filter channels (%lld) x groupCount (%d)",
                       static_cast<long long>(x.dims[1]), static_cast<long long>(w.dims[1]), c.group_count);
    int64_t out[kDimMax];
    out[0] = x.dims[0];
    out[1] = w.dims[0];
    for (int i = 0; i < c.nb_spatial; ++i) {
        const int64_t in = x.dims[i + 2];
        const int64_t extent = (w.dims[i + 2] - 1) * c.dilations[i] + 1;
        const int64_t padded = in + 2 * static_cast<int64_t>(c.pads[i]);
        ODNN_REQUIRE_PARAM(padded >= extent,
                           "spatial dim %d: input %lld + 2 x pad %d is smaller than the dilated filter extent %lld", i,
                           static_cast<long long>(in), c.pads[i], static_cast<long long>(extent));
        out[i + 2] = 1 + (padded - extent) / c.strides[i];
    }
    for (int i = 0; i < nb_dims_out; ++i) out_dims[i] = static_cast<int>(out[i]);
    return Status::ok();
}

}  // namespace odnn::core
